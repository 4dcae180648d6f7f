// The model-facing sampling interface for per-component time series. An LP type declares a component kind
// (e.g. "gpu") with its metrics and descriptive columns, registers the components its local LPs own, and
// records values ONLY from commit() handlers: committed events are final, so a rollback can never reach the
// series. Values land on a fixed simulated-time grid [k * interval, (k + 1) * interval). The grid is
// allocated lazily as records arrive, in blocks of samples (a training run's length is not known in
// advance); finish() cuts it at the run's real end. Memory is (local components x samples used x metrics)
// doubles per rank.
// No MPI or HDF5 here: io/ reads a finished recorder and writes it (io/hdf5_series_writer.hpp).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/sim_time.hpp"
#include "engine/zeroed_buffer.hpp"

namespace warpsim {

enum class Aggregation : std::uint8_t {
  kSum,  // add()/add_spread(): the sample is the sum of the amounts recorded in the interval (a counter)
  kMax,  // set()/peak(): the sample is the largest level held or peak seen during the interval
  kTimeAverage,  // set() (a level held over time) and/or add()/add_spread() of time integrals (value x ps):
                 // the sample is the time-weighted mean over the interval
};
std::string_view to_string(Aggregation aggregation);

struct MetricSpec {
  std::string name;  // dataset name: /series/<kind>/<name>
  std::string unit;  // e.g. "events", "bytes", "fraction"
  Aggregation aggregation = Aggregation::kSum;
  std::string description;
};

// A descriptive per-component column (/components/<kind>/<name>), e.g. a topology coordinate.
struct ColumnSpec {
  std::string name;
  std::string unit;   // "" for indices
  bool real = false;  // written as float64; otherwise int64
  std::string description;
};

class SeriesRecorder {
 public:
  using KindId = std::uint32_t;
  // A component registered on this rank (cheap to copy; keep one per LP slot).
  struct Component {
    KindId kind = 0;
    std::uint32_t local = 0;
  };
  struct alignas(64) AccumulatorLine {
    std::uint64_t words[8];
  };
  static constexpr std::uint32_t kLineWords = sizeof(AccumulatorLine) / sizeof(std::uint64_t);
  struct Kind {
    // The current-sample record of local component `local`.
    std::uint64_t* record(std::uint32_t local) {
      return reinterpret_cast<std::uint64_t*>(accumulators.data()) + static_cast<std::size_t>(local) * stride;
    }
    const std::uint64_t* record(std::uint32_t local) const {
      return reinterpret_cast<const std::uint64_t*>(accumulators.data()) +
             static_cast<std::size_t>(local) * stride;
    }
    // Point records accumulate into a small per-component record for the current sample (sums, or the
    // peak for kMax metrics) and reach `grid` once per sample. The cursor only moves forward: a record
    // for an earlier sample goes straight to `grid`, so a handler recording at a few nearby times (a
    // packet's arrival, and its later serialization) does not flush back and forth. The
    // per-event path touches one cache line per component instead of missing into the [component][sample]
    // arrays. Record: [sample start, sample end, one double (as bits)
    // per metric], padded to whole 64-byte lines: records of 6-7 words would otherwise straddle two lines
    // most of the time, and a commit pays a second miss. First in the struct: the per-event path reads only
    // these two fields of the kind, and here they share one cache line.
    std::vector<AccumulatorLine> accumulators;
    std::uint32_t stride = 0;  // words per record: 2 + metrics, rounded up to whole lines
    std::string name;
    std::uint64_t component_count = 0;  // global: ids are dense in [0, component_count)
    std::vector<MetricSpec> metrics;
    std::vector<ColumnSpec> columns;
    std::vector<std::uint64_t> ids;     // local components' global ids, in registration order
    std::vector<std::string> names;     // same order; may be empty strings
    std::vector<double> column_values;  // [local component][column]
    // While recording: blocks of 2^block_shift consecutive samples, each laid out [sample][local
    // component][metric]. A block holds at least 8 samples and 2 MiB, or 64 samples (huge-page backed,
    // ZeroedBuffer). Sample-major, because components close their samples at about the same simulated time:
    // the samples being closed are a few hot rows, not one cache miss per component. The grid grows by adding
    // blocks (no relayout copies of what is recorded). finish() turns it into `values`: per metric, [local
    // component][sample].
    std::vector<ZeroedBuffer> blocks;
    std::uint32_t block_shift = 0;  // set when the first block is allocated
    std::vector<ZeroedBuffer> values;
    struct Level {
      double level = 0;
      SimTime since = 0;
    };
    std::vector<std::vector<Level>> levels;  // per metric: per local component (set() gauges only)
  };

  // interval and end_time (the largest grid end) in picoseconds; throws std::invalid_argument if either
  // is 0.
  SeriesRecorder(SimTime interval, SimTime end_time);

  // Every rank must declare the same kinds in the same order (the writer walks them collectively).
  KindId declare_kind(std::string name, std::uint64_t component_count, std::vector<MetricSpec> metrics,
                      std::vector<ColumnSpec> columns = {});
  // Registers a component owned by one of this rank's LPs, with one value per declared column. All of a
  // component's records must come from one LP, so that they arrive in time order.
  Component add_component(KindId kind, std::uint64_t global_id, std::string name = {},
                          std::span<const double> columns = {});

  // Counter or time integral: adds `amount` to the sample holding time t. Times at/after the end are
  // ignored.
  void add(Component c, std::uint32_t metric, SimTime t, double amount) {
    Kind& kind = kinds_[c.kind];
    std::uint64_t* acc = kind.record(c.local);
    if (t >= acc[1] || t < acc[0]) {
      if (t >= end_time_) return;
      if (t < acc[0]) return add_direct(kind, c.local, metric, t, amount);
      move_cursor(kind, c.local, t);
    }
    acc[2 + metric] = std::bit_cast<std::uint64_t>(std::bit_cast<double>(acc[2 + metric]) + amount);
  }
  // Spreads `amount` over [t0, t1) in proportion to each sample's overlap (e.g. the bytes of a packet over
  // its serialization, or a busy period's length for a busy fraction). The part at/after the end is
  // dropped. t1 <= t0 is add(t0).
  void add_spread(Component c, std::uint32_t metric, SimTime t0, SimTime t1, double amount) {
    Kind& kind = kinds_[c.kind];
    std::uint64_t* acc = kind.record(c.local);
    if (t0 >= acc[0] && t1 <= acc[1] && t1 > t0) {  // within the current sample: the common case
      acc[2 + metric] = std::bit_cast<std::uint64_t>(std::bit_cast<double>(acc[2 + metric]) + amount);
      return;
    }
    spread(kind, c, metric, t0, t1, amount);
  }
  // The current-sample record of one component, for a commit that records several of its metrics over one
  // span: a single bounds check instead of one per record. add() and peak() do what add()/add_spread() and
  // peak() above do for times within the current sample, with the same bits.
  class SampleRecord {
   public:
    SampleRecord() = default;  // empty
    explicit operator bool() const { return values_ != nullptr; }
    void add(std::uint32_t metric, double amount) {
      values_[metric] = std::bit_cast<std::uint64_t>(std::bit_cast<double>(values_[metric]) + amount);
    }
    void peak(std::uint32_t metric, double value) {
      if (value > std::bit_cast<double>(values_[metric]))
        values_[metric] = std::bit_cast<std::uint64_t>(value);
    }

   private:
    friend class SeriesRecorder;
    explicit SampleRecord(std::uint64_t* values) : values_(values) {}
    std::uint64_t* values_ = nullptr;
  };
  // Component `c`'s record if every time in [t0, t1] (t0 <= t1) lies within its current sample; else an
  // empty one, and the caller takes the per-record calls above (which move the cursor or go to the grid).
  // Closed at t1: a zero-length spread inside the span records at its start, which may be t1, so a span
  // ending exactly at the sample's end takes the per-record calls.
  SampleRecord current_sample(Component c, SimTime t0, SimTime t1) {
    std::uint64_t* acc = kinds_[c.kind].record(c.local);
    return SampleRecord(t0 >= acc[0] && t0 <= t1 && t1 < acc[1] ? acc + 2 : nullptr);
  }
  // Gauge (kMax / kTimeAverage metrics): the level becomes `level` at time t (levels start at 0 at time 0).
  void set(Component c, std::uint32_t metric, SimTime t, double level);
  // kMax metrics: `value` (>= 0) was reached at time t (a momentary peak; no level is held afterwards).
  void peak(Component c, std::uint32_t metric, SimTime t, double value) {
    Kind& kind = kinds_[c.kind];
    std::uint64_t* acc = kind.record(c.local);
    if (t >= acc[1] || t < acc[0]) {
      if (t >= end_time_) return;
      if (t < acc[0]) return peak_direct(kind, c.local, metric, t, value);
      move_cursor(kind, c.local, t);
    }
    if (value > std::bit_cast<double>(acc[2 + metric])) acc[2 + metric] = std::bit_cast<std::uint64_t>(value);
  }

  // Starts the cache miss of component `c`'s current-sample record. A forward() handler calls it so that,
  // in a sequential run (commit right after forward), the commit's records find it in cache. Changes nothing.
  void prefetch(Component c) const {
    const Kind& kind = kinds_[c.kind];
    __builtin_prefetch(kind.record(c.local), 1);
  }

  // The same for the held level of gauge `metric` (set() reads it, in a line of its own).
  void prefetch_gauge(Component c, std::uint32_t metric) const {
    __builtin_prefetch(&kinds_[c.kind].levels[metric][c.local], 1);
  }

  // Samples touched by a record so far: the grid a run needs ends at used_samples() * interval.
  std::uint64_t used_samples() const { return used_; }

  // Widens the interval `factor` times, merging each run of `factor` samples (sums add, peaks take the
  // max, time integrals add). Lets a caller pick a coarser grid once the run's length is known; every
  // rank must pass the same factor. Call before finish().
  void coarsen(std::uint64_t factor);

  // Cuts the grid at `end` (0 = the constructor's end_time; at most that), closes every gauge there and
  // turns time integrals into averages. Call once after the run, before writing; later records are errors.
  // With make_rows = false the series stay in the recording blocks: copy_samples() reads them (the
  // one-rank writer compresses straight from there), and the per-metric rows that row(), metric_values()
  // and the derived series need are made only by make_rows() (add_derived_metric() and mutable_row() call
  // it): no second copy of the whole grid when nothing needs one.
  void finish(SimTime end = 0, bool make_rows = true);
  bool finished() const { return finished_; }
  // After finish(): lays every kind out as per-metric [local component][sample] rows (once; frees the
  // blocks).
  void make_rows();
  bool rows_made() const { return rows_made_; }
  // After finish(): samples [s0, s1) of one local component's metric into `out`, whether or not the rows
  // are made (the same values bit for bit). A one-row copy_tile(), with its checks.
  void copy_samples(KindId kind, std::uint32_t metric, std::uint32_t local, std::uint64_t s0,
                    std::uint64_t s1, double* out) const;
  // After finish(): a tile of the same values, samples [s0, s1) of each local component in `locals`, row i
  // at out + i * row_stride (row_stride >= s1 - s0). Reads the recording blocks sample by sample, where one
  // sample's components lie side by side: a writer filling a [component, sample] chunk one component at a
  // time would instead read each recorded line once per component and sample, at a stride of a whole sample.
  void copy_tile(KindId kind, std::uint32_t metric, std::span<const std::uint32_t> locals, std::uint64_t s0,
                 std::uint64_t s1, double* out, std::size_t row_stride) const;

  SimTime interval() const { return interval_; }
  SimTime end_time() const { return end_time_; }
  std::uint64_t sample_count() const { return samples_; }
  std::span<const Kind> kinds() const { return kinds_; }
  // The samples of one local component after finish() and make_rows(): sample_count() values.
  std::span<const double> row(KindId kind, std::uint32_t metric, std::uint32_t local) const;
  // Every local component's row of one metric after finish() and make_rows(), back to back in registration
  // order.
  std::span<const double> metric_values(KindId kind, std::uint32_t metric) const;

  // Derived series, after finish(): a metric computed from the recorded ones (e.g. power from busy
  // fractions and bytes) is appended to `kind` with all-zero rows that mutable_row() fills, and a derived
  // per-component column (e.g. energy) with one value per local component. Both are written like the
  // recorded ones. Throws std::logic_error before finish() and std::invalid_argument for a duplicate name or
  // a wrong number of column values.
  std::uint32_t add_derived_metric(KindId kind, MetricSpec metric);
  std::span<double> mutable_row(KindId kind, std::uint32_t metric, std::uint32_t local);
  void add_derived_column(KindId kind, ColumnSpec column, std::span<const double> values);
  // The kind declared as `name`, or nullopt.
  std::optional<KindId> find_kind(std::string_view name) const;
  // The index of metric / column `name` of `kind`, or nullopt.
  std::optional<std::uint32_t> find_metric(KindId kind, std::string_view name) const;
  std::optional<std::uint32_t> find_column(KindId kind, std::string_view name) const;

  // Checkpoint/restart: save() writes everything recorded so far (grid, current samples, held levels,
  // interval after coarsen(), finished or not) in a binary form; load() restores it into a recorder that
  // declared the same kinds and registered the same components (ids, in the same order), after which
  // recording continues as if never interrupted. The form is logical (per component and sample), not the
  // in-memory layout. load() throws std::runtime_error naming what is wrong on malformed, truncated or
  // mismatching input, and leaves the recorder unchanged then.
  void save(std::ostream& out) const;
  void load(std::istream& in);

 private:
  void hold(Kind& kind, std::uint32_t metric, std::uint32_t local, SimTime until);
  void flush(Kind& kind, std::uint32_t local);
  // Length of sample s after finish(): the interval, or less for the last sample cut at the end (the
  // divisor that turns a time integral into an average; make_rows() and copy_samples() share it).
  double sample_length(std::uint64_t s) const {
    return static_cast<double>(std::min(end_time_, (s + 1) * interval_) - s * interval_);
  }
  void move_cursor(Kind& kind, std::uint32_t local, SimTime t);
  void add_direct(Kind& kind, std::uint32_t local, std::uint32_t metric, SimTime t, double amount);
  void peak_direct(Kind& kind, std::uint32_t local, std::uint32_t metric, SimTime t, double value);
  void spread(Kind& kind, Component c, std::uint32_t metric, SimTime t0, SimTime t1, double amount);
  // Makes sample `s` addressable in every row (grows the rows' capacity) and counts it as used.
  double* slot(Kind& kind, std::uint32_t metric, std::uint32_t local, std::uint64_t s);
  void reserve(std::uint64_t samples);
  // The `metrics.size()` adjacent values of sample `s` (< capacity_) of one local component while recording.
  double* cell(Kind& kind, std::uint32_t local, std::uint64_t s);
  const double* cell(const Kind& kind, std::uint32_t local, std::uint64_t s) const;
  // Every kind's grid becomes all zeros with room for `capacity` samples per component.
  void allocate_grid(std::uint64_t capacity);
  // Picks the kind's block length (once its components are known) and sizes one block.
  static void choose_block_shift(Kind& kind);
  static std::size_t block_size(const Kind& kind) {
    return (std::size_t{1} << kind.block_shift) * kind.ids.size() * kind.metrics.size();
  }
  // Samples [0, n) of the kind have blocks.
  static std::uint64_t covered(const Kind& kind) { return kind.blocks.size() << kind.block_shift; }

  SimTime interval_;
  SimTime end_time_;
  std::uint64_t samples_;       // grid length: ceil(end_time / interval)
  std::uint64_t capacity_ = 0;  // samples allocated: every kind has blocks for samples [0, capacity_)
  std::uint64_t used_ = 0;
  std::vector<Kind> kinds_;
  bool finished_ = false;
  bool rows_made_ = false;  // finished, and `values` holds the rows (the blocks are gone)
};

}  // namespace warpsim
