// Per-component time series on a fixed simulated-time grid (see series_recorder.hpp).
#include "engine/series_recorder.hpp"

#include <algorithm>
#include <stdexcept>

namespace warpsim {

std::string_view to_string(Aggregation aggregation) {
  switch (aggregation) {
    case Aggregation::kSum:
      return "sum";
    case Aggregation::kMax:
      return "max";
    case Aggregation::kTimeAverage:
      return "time_average";
  }
  return "unknown";
}

SeriesRecorder::SeriesRecorder(SimTime interval, SimTime end_time)
    : interval_(interval), end_time_(end_time) {
  if (interval == 0) throw std::invalid_argument("sample interval must be > 0");
  if (end_time == 0) throw std::invalid_argument("series end time must be > 0");
  samples_ = end_time / interval + (end_time % interval != 0 ? 1 : 0);
}

SeriesRecorder::KindId SeriesRecorder::declare_kind(std::string name, std::uint64_t component_count,
                                                    std::vector<MetricSpec> metrics,
                                                    std::vector<ColumnSpec> columns) {
  if (name.empty()) throw std::invalid_argument("component kind name must not be empty");
  for (const Kind& k : kinds_) {
    if (k.name == name) throw std::invalid_argument("component kind '" + name + "' declared twice");
  }
  if (metrics.empty()) throw std::invalid_argument("component kind '" + name + "' has no metrics");
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    if (metrics[i].name.empty()) throw std::invalid_argument("kind '" + name + "': metric without a name");
    for (std::size_t j = 0; j < i; ++j) {
      if (metrics[j].name == metrics[i].name)
        throw std::invalid_argument("kind '" + name + "': metric '" + metrics[i].name + "' declared twice");
    }
  }
  for (const ColumnSpec& col : columns) {
    if (col.name.empty() || col.name == "id" || col.name == "name")
      throw std::invalid_argument("kind '" + name + "': column name '" + col.name + "' is empty or reserved");
  }
  Kind kind;
  kind.name = std::move(name);
  kind.component_count = component_count;
  kind.stride = static_cast<std::uint32_t>((2 + metrics.size() + kLineWords - 1) / kLineWords * kLineWords);
  kind.values.resize(metrics.size());
  kind.levels.resize(metrics.size());
  kind.metrics = std::move(metrics);
  kind.columns = std::move(columns);
  kinds_.push_back(std::move(kind));
  return static_cast<KindId>(kinds_.size() - 1);
}

SeriesRecorder::Component SeriesRecorder::add_component(KindId kind_id, std::uint64_t global_id,
                                                        std::string name, std::span<const double> columns) {
  Kind& kind = kinds_.at(kind_id);
  if (global_id >= kind.component_count) {
    throw std::invalid_argument("kind '" + kind.name + "': component id " + std::to_string(global_id) +
                                " outside [0, " + std::to_string(kind.component_count) + ")");
  }
  if (columns.size() != kind.columns.size()) {
    throw std::invalid_argument("kind '" + kind.name + "': " + std::to_string(columns.size()) +
                                " column values for " + std::to_string(kind.columns.size()) + " columns");
  }
  const auto local = static_cast<std::uint32_t>(kind.ids.size());
  kind.ids.push_back(global_id);
  kind.names.push_back(std::move(name));
  kind.column_values.insert(kind.column_values.end(), columns.begin(), columns.end());
  // Zero bits are an empty [0, 0) sample and 0.0 sums.
  kind.accumulators.resize(kind.accumulators.size() + kind.stride / kLineWords, AccumulatorLine{});
  if (!kind.blocks.empty()) {
    // Registered after recording began (unusual): the blocks gain a component in every sample.
    const std::size_t m = kind.metrics.size();
    const std::size_t per_block = std::size_t{1} << kind.block_shift;
    for (ZeroedBuffer& block : kind.blocks) {
      ZeroedBuffer wider(per_block * (local + 1) * m);
      for (std::size_t s = 0; s < per_block; ++s)
        std::copy_n(block.data() + s * local * m, local * m, wider.data() + s * (local + 1) * m);
      block = std::move(wider);
    }
  }
  for (std::size_t m = 0; m < kind.metrics.size(); ++m) {
    if (kind.metrics[m].aggregation != Aggregation::kSum) kind.levels[m].emplace_back();
  }
  return Component{kind_id, local};
}

void SeriesRecorder::choose_block_shift(Kind& kind) {
  // At least 8 samples, and at least one huge page (few page faults; the sample rows stay contiguous), but
  // at most 64 samples for that: a small kind (16 storage targets, 640 B per sample) would otherwise take
  // 4096-sample blocks, 2.6 MB each (and as much again for the spare) for a run of a few hundred samples.
  const std::size_t sample_bytes =
      std::max<std::size_t>(1, kind.ids.size() * kind.metrics.size() * sizeof(double));
  kind.block_shift = 3;
  while ((sample_bytes << kind.block_shift) < (std::size_t{2} << 20) && kind.block_shift < 6)
    ++kind.block_shift;
}

void SeriesRecorder::reserve(std::uint64_t samples) {
  if (samples <= capacity_) return;
  samples = std::min(samples, samples_);
  std::uint64_t capacity = samples_;
  for (Kind& kind : kinds_) {
    if (kind.blocks.empty()) choose_block_shift(kind);
    // One spare block beyond what is asked for, faulted in by a background thread: recording reaches it
    // only after the next reserve(), by when its page faults (a few % of a run on a virtual machine) are
    // done. The spare stays outside capacity_, so nothing is recorded into it before it is reserved.
    const std::uint64_t per_block = std::uint64_t{1} << kind.block_shift;
    const std::uint64_t needed = (samples + per_block - 1) / per_block;
    while (kind.blocks.size() < needed) kind.blocks.emplace_back(block_size(kind));
    if (kind.blocks.size() == needed && needed * per_block < samples_) {
      kind.blocks.emplace_back(block_size(kind));
      kind.blocks.back().populate_async();
    }
    capacity = std::min(capacity, needed * per_block);
  }
  capacity_ = capacity;
}

double* SeriesRecorder::cell(Kind& kind, std::uint32_t local, std::uint64_t s) {
  const std::uint64_t in_block = s & ((std::uint64_t{1} << kind.block_shift) - 1);
  return kind.blocks[s >> kind.block_shift].data() +
         (in_block * kind.ids.size() + local) * kind.metrics.size();
}

const double* SeriesRecorder::cell(const Kind& kind, std::uint32_t local, std::uint64_t s) const {
  const std::uint64_t in_block = s & ((std::uint64_t{1} << kind.block_shift) - 1);
  return kind.blocks[s >> kind.block_shift].data() +
         (in_block * kind.ids.size() + local) * kind.metrics.size();
}

void SeriesRecorder::allocate_grid(std::uint64_t capacity) {
  for (Kind& kind : kinds_) kind.blocks.clear();
  capacity_ = 0;
  reserve(capacity);
}

double* SeriesRecorder::slot(Kind& kind, std::uint32_t metric, std::uint32_t local, std::uint64_t s) {
  reserve(s + 1);
  used_ = std::max(used_, s + 1);
  return cell(kind, local, s) + metric;
}

void SeriesRecorder::hold(Kind& kind, std::uint32_t metric, std::uint32_t local, SimTime until) {
  Kind::Level& lv = kind.levels[metric][local];
  until = std::min(until, end_time_);
  if (until <= lv.since) return;
  // A zero level adds nothing to a time integral, and samples start at 0 (and only grow) for peaks: a gauge
  // at rest (most of them, most of the time) costs no walk over the grid.
  if (lv.level != 0) {
    const std::uint64_t first = lv.since / interval_;
    const std::uint64_t last = (until - 1) / interval_;  // last sample with a non-empty overlap
    const bool peak = kind.metrics[metric].aggregation == Aggregation::kMax;
    std::uint64_t* acc = kind.record(local);
    if (!peak && lv.since >= acc[0] && until <= acc[1]) {
      // Within the component's current sample (a gauge that changes often, e.g. a GPU's comm wait): into
      // its accumulator record, which the other records of the same commit have in cache anyway.
      acc[2 + metric] = std::bit_cast<std::uint64_t>(std::bit_cast<double>(acc[2 + metric]) +
                                                     lv.level * static_cast<double>(until - lv.since));
      lv.since = until;
      return;
    }
    reserve(last + 1);
    if (peak) {
      for (std::uint64_t s = first; s <= last; ++s) {
        double& v = cell(kind, local, s)[metric];
        v = std::max(v, lv.level);
      }
    } else {
      for (std::uint64_t s = first; s <= last; ++s) {
        const SimTime lo = std::max(lv.since, s * interval_);
        const SimTime hi = std::min(until, (s + 1) * interval_);
        cell(kind, local, s)[metric] += lv.level * static_cast<double>(hi - lo);
      }
    }
  }
  lv.since = until;
}

void SeriesRecorder::flush(Kind& kind, std::uint32_t local) {
  std::uint64_t* acc = kind.record(local);
  if (acc[1] == acc[0]) return;  // no sample yet
  const std::uint64_t sample = acc[0] / interval_;
  double* v = sample < samples_ ? slot(kind, 0, local, sample) : nullptr;  // the sample's metrics, adjacent
  for (std::size_t m = 0; m < kind.metrics.size(); ++m) {
    const double sum = std::bit_cast<double>(acc[2 + m]);
    if (sum == 0) continue;
    acc[2 + m] = std::bit_cast<std::uint64_t>(0.0);
    if (v == nullptr) continue;
    v[m] = kind.metrics[m].aggregation == Aggregation::kMax ? std::max(v[m], sum) : v[m] + sum;
  }
}

void SeriesRecorder::move_cursor(Kind& kind, std::uint32_t local, SimTime t) {
  flush(kind, local);
  std::uint64_t* acc = kind.record(local);
  acc[0] = t / interval_ * interval_;
  acc[1] = std::min(end_time_, acc[0] + interval_);
  used_ = std::max(used_, t / interval_ + 1);
}

void SeriesRecorder::add_direct(Kind& kind, std::uint32_t local, std::uint32_t metric, SimTime t,
                                double amount) {
  *slot(kind, metric, local, t / interval_) += amount;
}

void SeriesRecorder::peak_direct(Kind& kind, std::uint32_t local, std::uint32_t metric, SimTime t,
                                 double value) {
  double* v = slot(kind, metric, local, t / interval_);
  *v = std::max(*v, value);
}

void SeriesRecorder::spread(Kind& kind, Component c, std::uint32_t metric, SimTime t0, SimTime t1,
                            double amount) {
  if (t1 <= t0) {
    add(c, metric, t0, amount);
    return;
  }
  if (t0 >= end_time_) return;
  const SimTime stop = std::min(t1, end_time_);
  const auto length = static_cast<double>(t1 - t0);
  const std::uint64_t first = t0 / interval_;
  const std::uint64_t last = (stop - 1) / interval_;
  if (first == last && stop == t1) {  // one sample: through the accumulator (moves the cursor there)
    add(c, metric, t0, amount);
    return;
  }
  double rest = amount;
  for (std::uint64_t s = first; s <= last; ++s) {
    const SimTime lo = std::max(t0, s * interval_);
    const SimTime hi = std::min(stop, (s + 1) * interval_);
    // The last share takes the remainder, so the shares add up to `amount` exactly.
    const double share = s == last && stop == t1 ? rest : amount * (static_cast<double>(hi - lo) / length);
    rest -= share;
    *slot(kind, metric, c.local, s) += share;
  }
}

void SeriesRecorder::set(Component c, std::uint32_t metric, SimTime t, double level) {
  if (t >= end_time_) return;
  Kind& kind = kinds_[c.kind];
  hold(kind, metric, c.local, t);
  Kind::Level& lv = kind.levels[metric][c.local];
  lv.since = std::max(lv.since, t);
  lv.level = level;
  if (kind.metrics[metric].aggregation == Aggregation::kMax) {
    double* s = slot(kind, metric, c.local, t / interval_);
    *s = std::max(*s, level);
  } else {
    used_ = std::max(used_, t / interval_ + 1);  // a time average has nothing to write at t itself
  }
}

void SeriesRecorder::coarsen(std::uint64_t factor) {
  if (finished_) throw std::logic_error("SeriesRecorder::coarsen after finish()");
  if (factor <= 1) return;
  for (Kind& kind : kinds_) {
    for (std::uint32_t local = 0; local < kind.ids.size(); ++local) {
      flush(kind, local);
      std::uint64_t* acc = kind.record(local);
      acc[0] = acc[1] = 0;  // no current sample: the next record places the cursor on the new grid
    }
  }
  const SimTime interval = interval_ * factor;
  const std::uint64_t samples = end_time_ / interval + (end_time_ % interval != 0 ? 1 : 0);
  const std::uint64_t old_capacity = capacity_;
  std::vector<std::vector<ZeroedBuffer>> old(kinds_.size());
  for (std::size_t k = 0; k < kinds_.size(); ++k) old[k].swap(kinds_[k].blocks);
  interval_ = interval;
  samples_ = samples;
  capacity_ = 0;
  reserve((old_capacity + factor - 1) / factor);
  for (std::size_t k = 0; k < kinds_.size(); ++k) {
    Kind& kind = kinds_[k];
    const std::size_t stride = kind.metrics.size();
    const std::size_t row = kind.ids.size() * stride;  // one sample of every local component
    const std::uint64_t mask = (std::uint64_t{1} << kind.block_shift) - 1;
    for (std::uint64_t s = 0; s < old_capacity; ++s) {
      const double* from = old[k][s >> kind.block_shift].data() + (s & mask) * row;
      double* to = cell(kind, 0, s / factor);
      for (std::size_t i = 0; i < row; ++i) {
        const bool peak = kind.metrics[i % stride].aggregation == Aggregation::kMax;
        to[i] = peak ? std::max(to[i], from[i]) : to[i] + from[i];
      }
      if ((s & mask) == mask) old[k][s >> kind.block_shift] = ZeroedBuffer();
    }
  }
  used_ = (used_ + factor - 1) / factor;
}

void SeriesRecorder::finish(SimTime end, bool make_rows_now) {
  if (finished_) return;
  finished_ = true;
  if (end != 0) end_time_ = std::min(end_time_, end);
  samples_ = end_time_ / interval_ + (end_time_ % interval_ != 0 ? 1 : 0);
  capacity_ = std::min(capacity_, samples_);
  for (Kind& kind : kinds_) {
    // Gauges first: a hold within the current sample lands in the accumulator, which the flush then empties.
    for (std::uint32_t m = 0; m < kind.metrics.size(); ++m) {
      if (kind.metrics[m].aggregation == Aggregation::kSum) continue;
      if (!kind.levels[m].empty()) {
        for (std::uint32_t local = 0; local < kind.ids.size(); ++local) hold(kind, m, local, end_time_);
      }
    }
    for (std::uint32_t local = 0; local < kind.ids.size(); ++local) flush(kind, local);
  }
  if (make_rows_now) make_rows();
}

void SeriesRecorder::make_rows() {
  if (!finished_) throw std::logic_error("SeriesRecorder::make_rows before finish()");
  if (rows_made_) return;
  rows_made_ = true;
  // Only now, when no flush or hold can add blocks any more: per metric, rows of exactly sample_count()
  // values (row() is a plain subspan); time integrals become averages over each sample's true length.
  for (Kind& kind : kinds_) {
    // Samples past capacity_ were never recorded: they stay 0. Block by block (a block's samples of one
    // component and metric are adjacent in `values`), releasing each block once copied.
    const std::size_t stride = kind.metrics.size();
    const std::size_t n = kind.ids.size();
    std::vector<double*> to(stride);
    std::vector<bool> average(stride);
    for (std::size_t m = 0; m < stride; ++m) {
      kind.values[m] = ZeroedBuffer(n * samples_);
      to[m] = kind.values[m].data();
      average[m] = kind.metrics[m].aggregation == Aggregation::kTimeAverage;
    }
    const std::uint64_t per_block = std::uint64_t{1} << kind.block_shift;
    for (std::uint64_t b = 0; b * per_block < capacity_; ++b) {
      const std::uint64_t s0 = b * per_block;
      const std::uint64_t s1 = std::min(capacity_, s0 + per_block);
      const double* block = kind.blocks[b].data();
      // Each (sample, component) record of the block is read once, all its metrics together; every
      // metric's row is written in sample order.
      for (std::size_t local = 0; local < n; ++local) {
        for (std::uint64_t s = s0; s < s1; ++s) {
          const double* from = block + ((s - s0) * n + local) * stride;
          const double length = sample_length(s);
          for (std::size_t m = 0; m < stride; ++m)
            to[m][local * samples_ + s] = average[m] ? from[m] / length : from[m];
        }
      }
      kind.blocks[b] = ZeroedBuffer();
    }
    kind.blocks.clear();
  }
  capacity_ = samples_;
}

void SeriesRecorder::copy_samples(KindId kind_id, std::uint32_t metric, std::uint32_t local, std::uint64_t s0,
                                  std::uint64_t s1, double* out) const {
  copy_tile(kind_id, metric, std::span<const std::uint32_t>(&local, 1), s0, s1, out, s1 - s0);
}

void SeriesRecorder::copy_tile(KindId kind_id, std::uint32_t metric, std::span<const std::uint32_t> locals,
                               std::uint64_t s0, std::uint64_t s1, double* out,
                               std::size_t row_stride) const {
  if (!finished_) throw std::logic_error("SeriesRecorder::copy_tile before finish()");
  if (s1 < s0 || s1 - s0 > row_stride)
    throw std::invalid_argument("SeriesRecorder::copy_tile: tile wider than rows");
  const Kind& kind = kinds_.at(kind_id);
  if (metric >= kind.metrics.size()) throw std::out_of_range("SeriesRecorder::copy_tile: no such metric");
  for (const std::uint32_t local : locals) {
    if (local >= kind.ids.size()) throw std::out_of_range("SeriesRecorder::copy_tile: no such component");
  }
  if (rows_made_) {
    for (std::size_t i = 0; i < locals.size(); ++i) {
      const double* row = kind.values[metric].data() + static_cast<std::size_t>(locals[i]) * samples_;
      std::copy(row + s0, row + s1, out + i * row_stride);
    }
    return;
  }
  // From the blocks, with make_rows()'s arithmetic (so the same bits), samples outer: each step reads one
  // sample's row of components, in ascending local order when `locals` is (the writers' id order usually
  // is). Samples past capacity_ were never recorded.
  const bool average = kind.metrics[metric].aggregation == Aggregation::kTimeAverage;
  const std::size_t stride = kind.metrics.size();
  for (std::uint64_t s = s0; s < s1; ++s) {
    double* column = out + (s - s0);
    if (s >= capacity_) {
      for (std::size_t i = 0; i < locals.size(); ++i) column[i * row_stride] = 0;
      continue;
    }
    const double* sample = cell(kind, 0, s) + metric;
    if (average) {
      const double length = sample_length(s);
      for (std::size_t i = 0; i < locals.size(); ++i)
        column[i * row_stride] = sample[locals[i] * stride] / length;
    } else {
      for (std::size_t i = 0; i < locals.size(); ++i) column[i * row_stride] = sample[locals[i] * stride];
    }
  }
}

std::uint32_t SeriesRecorder::add_derived_metric(KindId kind_id, MetricSpec metric) {
  if (!finished_) throw std::logic_error("SeriesRecorder::add_derived_metric before finish()");
  make_rows();
  Kind& kind = kinds_.at(kind_id);
  if (metric.name.empty() || find_metric(kind_id, metric.name))
    throw std::invalid_argument("kind '" + kind.name + "': derived metric '" + metric.name +
                                "' is unnamed or exists");
  kind.metrics.push_back(std::move(metric));
  kind.values.emplace_back(kind.ids.size() * samples_);
  kind.levels.emplace_back();  // no gauge: keeps one level list per metric (save/load walk them)
  return static_cast<std::uint32_t>(kind.metrics.size() - 1);
}

std::span<double> SeriesRecorder::mutable_row(KindId kind, std::uint32_t metric, std::uint32_t local) {
  if (!finished_) throw std::logic_error("SeriesRecorder::mutable_row before finish()");
  make_rows();
  auto& values = kinds_.at(kind).values.at(metric);
  return std::span<double>(values.data(), values.size())
      .subspan(static_cast<std::size_t>(local) * samples_, samples_);
}

void SeriesRecorder::add_derived_column(KindId kind_id, ColumnSpec column, std::span<const double> values) {
  if (!finished_) throw std::logic_error("SeriesRecorder::add_derived_column before finish()");
  Kind& kind = kinds_.at(kind_id);
  if (column.name.empty() || column.name == "id" || column.name == "name" ||
      find_column(kind_id, column.name))
    throw std::invalid_argument("kind '" + kind.name + "': derived column '" + column.name +
                                "' is unnamed, reserved or exists");
  if (values.size() != kind.ids.size())
    throw std::invalid_argument("kind '" + kind.name + "': " + std::to_string(values.size()) +
                                " values for derived column '" + column.name + "' of " +
                                std::to_string(kind.ids.size()) + " components");
  const std::size_t old = kind.columns.size();
  std::vector<double> wider;
  wider.reserve(kind.ids.size() * (old + 1));
  for (std::size_t local = 0; local < kind.ids.size(); ++local) {
    wider.insert(wider.end(), kind.column_values.begin() + static_cast<std::ptrdiff_t>(local * old),
                 kind.column_values.begin() + static_cast<std::ptrdiff_t>((local + 1) * old));
    wider.push_back(values[local]);
  }
  kind.column_values = std::move(wider);
  kind.columns.push_back(std::move(column));
}

std::optional<SeriesRecorder::KindId> SeriesRecorder::find_kind(std::string_view name) const {
  for (std::size_t k = 0; k < kinds_.size(); ++k) {
    if (kinds_[k].name == name) return static_cast<KindId>(k);
  }
  return std::nullopt;
}

std::optional<std::uint32_t> SeriesRecorder::find_metric(KindId kind, std::string_view name) const {
  const auto& metrics = kinds_.at(kind).metrics;
  for (std::size_t m = 0; m < metrics.size(); ++m) {
    if (metrics[m].name == name) return static_cast<std::uint32_t>(m);
  }
  return std::nullopt;
}

std::optional<std::uint32_t> SeriesRecorder::find_column(KindId kind, std::string_view name) const {
  const auto& columns = kinds_.at(kind).columns;
  for (std::size_t c = 0; c < columns.size(); ++c) {
    if (columns[c].name == name) return static_cast<std::uint32_t>(c);
  }
  return std::nullopt;
}

std::span<const double> SeriesRecorder::row(KindId kind, std::uint32_t metric, std::uint32_t local) const {
  if (!rows_made_) throw std::logic_error("SeriesRecorder::row before finish() and make_rows()");
  const auto& values = kinds_.at(kind).values.at(metric);
  return std::span<const double>(values.data(), values.size())
      .subspan(static_cast<std::size_t>(local) * samples_, samples_);
}

std::span<const double> SeriesRecorder::metric_values(KindId kind, std::uint32_t metric) const {
  if (!rows_made_) throw std::logic_error("SeriesRecorder::metric_values before finish() and make_rows()");
  const ZeroedBuffer& values = kinds_.at(kind).values.at(metric);
  return {values.data(), values.size()};
}

}  // namespace warpsim
