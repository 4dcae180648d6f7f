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
                                                    std::vector<MetricSpec> metrics) {
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
  Kind kind;
  kind.name = std::move(name);
  kind.component_count = component_count;
  kind.stride = static_cast<std::uint32_t>(2 + metrics.size());
  kind.values.resize(metrics.size());
  kind.levels.resize(metrics.size());
  kind.metrics = std::move(metrics);
  kinds_.push_back(std::move(kind));
  return static_cast<KindId>(kinds_.size() - 1);
}

SeriesRecorder::Component SeriesRecorder::add_component(KindId kind_id, std::uint64_t global_id,
                                                        std::string name) {
  Kind& kind = kinds_.at(kind_id);
  if (global_id >= kind.component_count) {
    throw std::invalid_argument("kind '" + kind.name + "': component id " + std::to_string(global_id) +
                                " outside [0, " + std::to_string(kind.component_count) + ")");
  }
  const auto local = static_cast<std::uint32_t>(kind.ids.size());
  kind.ids.push_back(global_id);
  kind.names.push_back(std::move(name));
  // Zero bits are an empty [0, 0) sample and 0.0 sums.
  kind.accumulators.resize(kind.accumulators.size() + kind.stride, 0);
  for (std::size_t m = 0; m < kind.metrics.size(); ++m) {
    kind.values[m].resize(kind.values[m].size() + samples_, 0.0);
    if (kind.metrics[m].aggregation != Aggregation::kSum) kind.levels[m].emplace_back();
  }
  return Component{kind_id, local};
}

void SeriesRecorder::hold(Kind& kind, std::uint32_t metric, std::uint32_t local, SimTime until) {
  Kind::Level& lv = kind.levels[metric][local];
  until = std::min(until, end_time_);
  if (until <= lv.since) return;
  double* v = kind.values[metric].data() + static_cast<std::size_t>(local) * samples_;
  const std::uint64_t first = lv.since / interval_;
  const std::uint64_t last = (until - 1) / interval_;  // last sample with a non-empty overlap
  if (kind.metrics[metric].aggregation == Aggregation::kMax) {
    for (std::uint64_t s = first; s <= last; ++s) v[s] = std::max(v[s], lv.level);
  } else {
    for (std::uint64_t s = first; s <= last; ++s) {
      const SimTime lo = std::max(lv.since, s * interval_);
      const SimTime hi = std::min(until, (s + 1) * interval_);
      v[s] += lv.level * static_cast<double>(hi - lo);
    }
  }
  lv.since = until;
}

void SeriesRecorder::flush(Kind& kind, std::uint32_t local) {
  std::uint64_t* acc = kind.accumulators.data() + static_cast<std::size_t>(local) * kind.stride;
  if (acc[1] == acc[0]) return;  // no sample yet
  const std::uint64_t sample = acc[0] / interval_;
  for (std::size_t m = 0; m < kind.metrics.size(); ++m) {
    const double sum = std::bit_cast<double>(acc[2 + m]);
    if (sum == 0) continue;
    kind.values[m][static_cast<std::size_t>(local) * samples_ + sample] += sum;
    acc[2 + m] = std::bit_cast<std::uint64_t>(0.0);
  }
}

void SeriesRecorder::move_cursor(Kind& kind, std::uint32_t local, SimTime t) {
  flush(kind, local);
  std::uint64_t* acc = kind.accumulators.data() + static_cast<std::size_t>(local) * kind.stride;
  acc[0] = t / interval_ * interval_;
  acc[1] = std::min(end_time_, acc[0] + interval_);
}

void SeriesRecorder::set(Component c, std::uint32_t metric, SimTime t, double level) {
  if (t >= end_time_) return;
  Kind& kind = kinds_[c.kind];
  hold(kind, metric, c.local, t);
  Kind::Level& lv = kind.levels[metric][c.local];
  lv.since = std::max(lv.since, t);
  lv.level = level;
  if (kind.metrics[metric].aggregation == Aggregation::kMax) {
    double& slot = kind.values[metric][static_cast<std::size_t>(c.local) * samples_ + t / interval_];
    slot = std::max(slot, level);
  }
}

void SeriesRecorder::finish() {
  if (finished_) return;
  finished_ = true;
  for (Kind& kind : kinds_) {
    for (std::uint32_t local = 0; local < kind.ids.size(); ++local) flush(kind, local);
    for (std::uint32_t m = 0; m < kind.metrics.size(); ++m) {
      if (kind.metrics[m].aggregation == Aggregation::kSum) continue;
      for (std::uint32_t local = 0; local < kind.ids.size(); ++local) hold(kind, m, local, end_time_);
      if (kind.metrics[m].aggregation != Aggregation::kTimeAverage) continue;
      for (std::uint32_t local = 0; local < kind.ids.size(); ++local) {
        double* v = kind.values[m].data() + static_cast<std::size_t>(local) * samples_;
        for (std::uint64_t s = 0; s < samples_; ++s) {
          const SimTime length = std::min(end_time_, (s + 1) * interval_) - s * interval_;
          v[s] /= static_cast<double>(length);
        }
      }
    }
  }
}

std::span<const double> SeriesRecorder::row(KindId kind, std::uint32_t metric, std::uint32_t local) const {
  const auto& values = kinds_.at(kind).values.at(metric);
  return std::span<const double>(values).subspan(static_cast<std::size_t>(local) * samples_, samples_);
}

}  // namespace warpsim
