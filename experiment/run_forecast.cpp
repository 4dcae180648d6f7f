// Run forecast: predicted events, memory and wall time of a training run (see run_forecast.hpp).
#include "experiment/run_forecast.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "engine/kernel/memory_guard.hpp"
#include "experiment/lp_graph.hpp"
#include "experiment/setting_error.hpp"
#include "models/cluster/topology.hpp"

namespace warpsim::experiment {

namespace {

std::string format(const char* fmt, double a, double b = 0, double c = 0) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, a, b, c);
  return buf;
}

}  // namespace

double predicted_peak_bytes_per_rank(std::uint64_t lps, int ranks, std::uint64_t speculation_events) {
  const double per_rank_lps = static_cast<double>(lps) / (ranks > 0 ? ranks : 1);
  return kProcessFloorBytes + kBytesPerLp * per_rank_lps +
         static_cast<double>(speculation_events) *
             static_cast<double>(MemoryGuard::kBytesPerUncommittedEvent);
}

std::uint64_t speculation_events(const EngineConfig& config, int ranks) {
  if (ranks <= 1 || config.sync != SyncMode::kOptimistic) return 0;
  // With a budget the rank takes what is left of it; at least MemoryGuard::kMinLimit.
  return config.memory_budget_bytes != 0 ? MemoryGuard::kMinLimit : uncommitted_limit(config);
}

void check_memory_budget(std::uint64_t lps, int ranks, const EngineConfig& config,
                         const std::string& budget_text) {
  const double budget = static_cast<double>(config.memory_budget_bytes);
  if (budget == 0) return;
  const std::uint64_t speculating = speculation_events(config, ranks);
  const double need = predicted_peak_bytes_per_rank(lps, ranks, speculating);
  if (need <= budget) return;
  constexpr double kMiB = 1024.0 * 1024.0;
  std::string message =
      "--memory-budget " + budget_text +
      format(": this run is predicted to need %.1f MiB per rank on %.0f rank(s) (process floor %.1f MiB",
             need / kMiB, ranks, kProcessFloorBytes / kMiB) +
      format(" + %.0f B per LP x %.0f LPs / ranks", kBytesPerLp, static_cast<double>(lps)) +
      (speculating != 0 ? format(" + %.0f speculative events x 1 KiB", static_cast<double>(speculating))
                        : std::string()) +
      "; docs/running.md, 'Memory budget')";
  // The smallest rank count that fits, if any does (more ranks speculate, so count that term too).
  const double speculation =
      config.sync == SyncMode::kSequential
          ? 0
          : static_cast<double>(MemoryGuard::kMinLimit * MemoryGuard::kBytesPerUncommittedEvent);
  const double room = budget - kProcessFloorBytes - speculation;
  if (room <= 0) {
    message +=
        format("; no rank count fits: the budget is below the %.1f MiB every rank needs before its LPs",
               (kProcessFloorBytes + speculation) / kMiB);
  } else if (config.sync == SyncMode::kSequential) {
    message += "; it needs more ranks than one, with --sync optimistic or conservative";
  } else {
    const double fit = std::ceil(kBytesPerLp * static_cast<double>(lps) / room);
    message += format("; %.0f or more ranks fit it", std::max(2.0, fit));
  }
  throw SettingError(message);
}

RunForecast forecast_run(const TrainingSetup& t, int ranks, std::uint64_t speculation) {
  RunForecast f;
  // The group granularity without edges is the cheapest graph that still counts every event (the weights do
  // not depend on the granularity, only how they are lumped).
  const partition::PartitionGraph graph = training::build_lp_graph(
      t.params, t.job, t.params.storage_targets, training::Granularity::kGroup, /*with_edges=*/false);
  f.events_per_step = graph.total_weight();
  f.events = f.events_per_step * t.steps;
  f.events_upper_bound = t.params.fidelity == cluster::Fidelity::kFlow;
  f.lps = cluster::make_topology(t.params)->lp_count();
  f.peak_bytes_per_rank = predicted_peak_bytes_per_rank(f.lps, ranks, speculation);
  f.wall_seconds = f.events / kReferenceEventsPerSecond;

  if (f.wall_seconds > kWarnWallSeconds || f.events > kWarnEvents) {
    f.warnings.push_back(
        format("this run is predicted to commit %.3g events", f.events) +
        (f.events_upper_bound ? " (an upper bound under flow fidelity)" : "") +
        format(", about %.0f s (%.1f min) at the reference rate of 3.76M events/s on one rank; a larger "
               "network.packet_bytes or fewer steps shortens it (docs/running.md, 'Before a long run')",
               f.wall_seconds, f.wall_seconds / 60));
  }
  if (f.events_upper_bound && ranks > 1) {
    // Measured, not assumed (docs/scale.md, "Flow fidelity on several ranks"): every message of a flow run
    // passes through one flow-network LP, so the other ranks wait on it or are rolled back by it.
    f.warnings.push_back(format(
        "flow fidelity on %.0f ranks: one LP holds every flow of the network, and multi-rank flow runs have "
        "measured 0.37x-1.06x the sequential speed on 2 ranks; --sync sequential (or packet fidelity) is "
        "usually faster (docs/scale.md, 'Flow fidelity on several ranks')",
        ranks));
  }
  return f;
}

void check_end_time_fits(const TrainingSetup& t, double end_time_s) {
  const double needed = t.estimate.step_seconds * t.steps;
  if (end_time_s < needed) {
    throw SettingError(
        format("simulation.end_time_s: %.6g s cannot complete the run: the compute-only estimate "
               "of its %.0f step(s) is already %.6g s (the network only adds to it)",
               end_time_s, static_cast<double>(t.steps), needed));
  }
}

}  // namespace warpsim::experiment
