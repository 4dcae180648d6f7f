// The model-facing sampling interface for per-component time series. An LP type declares a component kind
// (e.g. "gpu") with its metrics, registers the components its local LPs own, and records values ONLY from
// commit() handlers: committed events are final, so a rollback can never reach the series. Values land on a
// fixed simulated-time grid [k * interval, (k + 1) * interval) that ends at the run's end time. Memory is
// (local components x samples x metrics) doubles per rank: it scales only with what the rank owns.
// No MPI or HDF5 here: io/ reads a finished recorder and writes it (io/hdf5_series_writer.hpp).
#pragma once

#include <bit>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/sim_time.hpp"

namespace warpsim {

enum class Aggregation : std::uint8_t {
  kSum,          // add(): the sample is the sum of the amounts recorded in the interval (a counter)
  kMax,          // set(): the sample is the largest level held during the interval (a gauge)
  kTimeAverage,  // set(): the sample is the time-weighted mean level over the interval (a gauge)
};
std::string_view to_string(Aggregation aggregation);

struct MetricSpec {
  std::string name;  // dataset name: /series/<kind>/<name>
  std::string unit;  // e.g. "events", "bytes", "fraction"
  Aggregation aggregation = Aggregation::kSum;
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
  struct Kind {
    std::string name;
    std::uint64_t component_count = 0;  // global: ids are dense in [0, component_count)
    std::vector<MetricSpec> metrics;
    std::vector<std::uint64_t> ids;           // local components' global ids, in registration order
    std::vector<std::string> names;           // same order; may be empty strings
    std::vector<std::vector<double>> values;  // per metric: [local component][sample]
    struct Level {
      double level = 0;
      SimTime since = 0;
    };
    std::vector<std::vector<Level>> levels;  // per metric: per local component (gauges only)
    // Counters accumulate into a small per-component record for the current sample and reach `values`
    // once per sample, so the per-event path touches one cache line per component instead of missing into
    // the [component][sample] arrays. Record: [sample start, sample end, one double (as bits) per metric].
    std::uint32_t stride = 0;
    std::vector<std::uint64_t> accumulators;
  };

  // interval and end_time in picoseconds; throws std::invalid_argument if either is 0.
  SeriesRecorder(SimTime interval, SimTime end_time);

  // Every rank must declare the same kinds in the same order (the writer walks them collectively).
  KindId declare_kind(std::string name, std::uint64_t component_count, std::vector<MetricSpec> metrics);
  // Registers a component owned by one of this rank's LPs. All of a component's records must come from
  // one LP, so that they arrive in time order.
  Component add_component(KindId kind, std::uint64_t global_id, std::string name = {});

  // Counter (kSum metrics): adds `amount` to the sample holding time t. Times at/after the end are ignored.
  void add(Component c, std::uint32_t metric, SimTime t, double amount) {
    Kind& kind = kinds_[c.kind];
    std::uint64_t* acc = kind.accumulators.data() + static_cast<std::size_t>(c.local) * kind.stride;
    if (t >= acc[1] || t < acc[0]) {
      if (t >= end_time_) return;
      move_cursor(kind, c.local, t);
    }
    acc[2 + metric] = std::bit_cast<std::uint64_t>(std::bit_cast<double>(acc[2 + metric]) + amount);
  }
  // Gauge (kMax / kTimeAverage metrics): the level becomes `level` at time t (levels start at 0 at time 0).
  void set(Component c, std::uint32_t metric, SimTime t, double level);

  // Closes every gauge at the end time and turns time integrals into averages. Call once after the run,
  // before writing; later add()/set() calls are errors.
  void finish();
  bool finished() const { return finished_; }

  SimTime interval() const { return interval_; }
  SimTime end_time() const { return end_time_; }
  std::uint64_t sample_count() const { return samples_; }
  std::span<const Kind> kinds() const { return kinds_; }
  // One value per local component of `kind` for sample-grid row access: values[metric][local * samples + s].
  std::span<const double> row(KindId kind, std::uint32_t metric, std::uint32_t local) const;

 private:
  void hold(Kind& kind, std::uint32_t metric, std::uint32_t local, SimTime until);
  void flush(Kind& kind, std::uint32_t local);
  void move_cursor(Kind& kind, std::uint32_t local, SimTime t);

  SimTime interval_;
  SimTime end_time_;
  std::uint64_t samples_;
  std::vector<Kind> kinds_;
  bool finished_ = false;
};

}  // namespace warpsim
