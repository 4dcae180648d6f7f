// Run forecast: predicted events, memory and wall time of a training run (see run_forecast.hpp).
#include "experiment/run_forecast.hpp"

#include <cstdio>
#include <string>

#include "experiment/lp_graph.hpp"
#include "experiment/setting_error.hpp"
#include "models/cluster/topology.hpp"

namespace warpsim::experiment {

namespace {

std::string format(const char* fmt, double a, double b = 0, double c = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, a, b, c);
  return buf;
}

}  // namespace

RunForecast forecast_run(const TrainingSetup& t, int ranks) {
  RunForecast f;
  // The group granularity without edges is the cheapest graph that still counts every event (the weights do
  // not depend on the granularity, only how they are lumped).
  const partition::PartitionGraph graph = training::build_lp_graph(
      t.params, t.job, t.params.storage_targets, training::Granularity::kGroup, /*with_edges=*/false);
  f.events_per_step = graph.total_weight();
  f.events = f.events_per_step * t.steps;
  f.events_upper_bound = t.params.fidelity == cluster::Fidelity::kFlow;
  f.lps = cluster::make_topology(t.params)->lp_count();
  const double per_rank_lps = static_cast<double>(f.lps) / (ranks > 0 ? ranks : 1);
  f.peak_bytes_per_rank = kProcessFloorBytes + kBytesPerLp * per_rank_lps;
  f.wall_seconds = f.events / kReferenceEventsPerSecond;

  if (f.wall_seconds > kWarnWallSeconds || f.events > kWarnEvents) {
    f.warnings.push_back(
        format("this run is predicted to commit %.3g events", f.events) +
        (f.events_upper_bound ? " (an upper bound under flow fidelity)" : "") +
        format(", about %.0f s (%.1f min) at the reference rate of 3.76M events/s on one rank; a larger "
               "network.packet_bytes or fewer steps shortens it (docs/running.md, 'Before a long run')",
               f.wall_seconds, f.wall_seconds / 60));
  }
  return f;
}

void check_end_time_fits(const TrainingSetup& t, double end_time_s) {
  const double needed = t.estimate.step_seconds * t.steps;
  if (end_time_s < needed) {
    throw SettingError(format("simulation.end_time_s: %.6g s cannot complete the run: the compute-only estimate "
                              "of its %.0f step(s) is already %.6g s (the network only adds to it)",
                              end_time_s, static_cast<double>(t.steps), needed));
  }
}

}  // namespace warpsim::experiment
