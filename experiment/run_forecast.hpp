// What a training run will cost before it starts: predicted committed events, peak memory per rank and wall
// time, so that `warpsim run --check` and the start of every run can warn before a slow run instead of after.
//
// Events come from the partitioner's per-step traffic model (lp_graph.hpp: every packet hop, message end and
// compute op is one event), times the steps. On the 16k example it predicts 395,868,160 events per step
// against 395,847,680 simulated. Under flow fidelity there are no packets, so the same count is an upper
// bound and is labelled so. Wall time and memory use rates measured on the reference machine and recorded in
// docs/scale.md (sequential engine rate, per-LP bytes above the process floor); they are documented
// constants, not guesses, and a slower machine shows up as a forecast that is too short.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/kernel/engine_config.hpp"
#include "experiment/training_setup.hpp"

namespace warpsim::experiment {

// Measured reference values (docs/scale.md, docs/running.md "Before a long run").
inline constexpr double kReferenceEventsPerSecond = 3.76e6;  // 16k example, 1 rank, sequential
// Re-measured 2026-12-07 (docs/scale.md, "Memory beyond one machine"): `run --check` peaks at 26.3 MiB;
// sequential runs of the 16k and 100k examples hold 668 and 683 bytes per LP above it (GPU LPs carry
// their op cache and commit notes since these were first measured at 22.7 MiB and 330 B).
inline constexpr double kProcessFloorBytes = 26.3 * 1024 * 1024;  // `run --check` peak RSS
inline constexpr double kBytesPerLp = 680;                        // above the floor, 16k and 100k examples

// Warn above these (documented in docs/running.md).
inline constexpr double kWarnWallSeconds = 600;
inline constexpr double kWarnEvents = 1e9;

struct RunForecast {
  double events_per_step = 0;
  double events = 0;                // all steps
  bool events_upper_bound = false;  // flow fidelity: the packet-level count bounds it from above
  std::uint64_t lps = 0;
  double peak_bytes_per_rank = 0;
  double wall_seconds = 0;            // at kReferenceEventsPerSecond on one rank
  std::vector<std::string> warnings;  // one line each, empty when the run is small
};

// `speculation_events`: the uncommitted-event limit of each rank of an optimistic multi-rank run (0 for
// one rank or the other sync modes); each such event costs MemoryGuard::kBytesPerUncommittedEvent.
RunForecast forecast_run(const TrainingSetup& t, int ranks, std::uint64_t speculation_events);

// Peak resident bytes per rank (without the results file's series): the process floor, the rank's share of
// the LPs and its speculation.
double predicted_peak_bytes_per_rank(std::uint64_t lps, int ranks, std::uint64_t speculation_events);

// The uncommitted-event limit `config` gives each rank of a `ranks`-rank run, as far as it is known before
// the run (a memory budget lowers it further from what the rank holds once its LPs exist).
std::uint64_t speculation_events(const EngineConfig& config, int ranks);

// Throws SettingError naming --memory-budget when a run of `lps` LPs is predicted not to fit `config`'s
// per-rank budget on `ranks` ranks, with the rank count that would. Nothing when there is no budget.
void check_memory_budget(std::uint64_t lps, int ranks, const EngineConfig& config,
                         const std::string& budget_text);

// Throws SettingError naming simulation.end_time_s when the compute-only estimate of the steps (a lower
// bound: the network can only add to it) does not fit before the end time, so the run could not complete.
void check_end_time_fits(const TrainingSetup& t, double end_time_s);

}  // namespace warpsim::experiment
