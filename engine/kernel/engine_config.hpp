// Run settings of the engine: sync mode, end time, seed and the optimistic/conservative knobs.
// Defaults are sized so that any rank count works without tuning (the pool grows on demand).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "engine/kernel/checkpoint_config.hpp"
#include "engine/sim_time.hpp"

namespace warpsim {

enum class SyncMode { kSequential, kConservative, kOptimistic };
enum class OptimismControlMode { kAuto, kAdaptive, kFixed };

std::optional<SyncMode> parse_sync_mode(std::string_view text);
std::string_view to_string(SyncMode mode);

struct EngineConfig {
  SyncMode sync = SyncMode::kOptimistic;
  SimTime end_time = 0;  // events at or after end_time are not executed
  std::uint64_t seed = 1;
  // Optimistic: events a rank processes between GVT rounds it starts itself.
  std::uint32_t gvt_interval = 4096;
  // Optimistic: processed-but-uncommitted events a rank may hold before it waits for GVT (memory bound).
  // 0 = automatic (16 x gvt_interval).
  std::uint64_t max_uncommitted = 0;
  // Optimistic: resident bytes each rank should stay under (0 = no budget). The rank sets its
  // uncommitted-event limit from the headroom it has when the run starts and halves it while a GVT round
  // finds it over the budget (engine/kernel/memory_guard.hpp); every mode reports the peak against it.
  std::uint64_t memory_budget_bytes = 0;
  // With a budget: what the rank is expected to hold at its peak without speculation (the front end's
  // forecast: process, LPs, their pending events), when that is known; the headroom is taken from the larger
  // of it and the resident memory at the start, since a model's pending events grow during a run.
  std::uint64_t memory_expected_bytes = 0;
  // Optimistic: give each rank a window of simulated time beyond GVT that adapts to the share of its recent
  // work that was rolled back (engine/kernel/optimism_control.hpp), or none (fixed: only max_uncommitted and
  // optimism_window throttle). Automatic: adaptive where the node runs more ranks than it has CPUs, so that
  // a throttled (sleeping) rank's CPU goes to ranks with useful work; fixed otherwise, where waiting would
  // leave the rank's core idle.
  OptimismControlMode optimism_control = OptimismControlMode::kAuto;
  // Optimistic, adaptive: a rank halves its window when more than this share of the events it processed
  // since its last adjustment was rolled back, and grows it when less than a quarter of it was.
  double rollback_target = 0.1;
  // Optimistic: events more than this ahead of GVT wait (time-window throttle); infinity = off.
  SimTime optimism_window = kTimeInfinity;
  // Optimistic: microseconds an idle rank sleeps before it polls again, once it has found nothing to do a few
  // times in a row. On a node running more ranks than it has CPUs, a spinning idle rank takes the CPU from
  // the ranks that have work. -1 = automatic: 50 on such an oversubscribed node, otherwise 0 (spin).
  std::int32_t idle_sleep_us = -1;
  // Events handled between polls of the network (and flushes of partly filled send batches).
  std::uint32_t poll_interval = 16;
  // Optimistic: wall-clock microseconds at least between two polls while the rank has events to run (it
  // checks the clock every poll_interval events). On a node running more ranks than CPUs every empty poll
  // costs a system call (OpenMPI then yields the CPU inside each idle progress call), so polling by event
  // count alone spent a quarter of the CPU in the kernel there. -1 = automatic: 100 on such an
  // oversubscribed node, otherwise 0 (poll every poll_interval events).
  std::int32_t poll_us = -1;
  // Events per MPI message at most.
  std::uint32_t batch = 256;
  // Seconds between progress lines on rank 0; 0 = silent.
  double progress_seconds = 2.0;
  // Model-supplied share of the run's work done, in [0, 1], as rank 0 sees it (e.g. the GPU ops its GPUs
  // executed / the ops in their programs). The engine knows no model quantities and end_time is often
  // only a cap, so without this hook the progress line's percentage and ETA are GVT / end_time.
  std::function<double()> progress_fraction;
  // Checkpoint/restart (docs/checkpoint.md); off by default.
  CheckpointConfig checkpoint;
};

// What the engine refuses to run with: the one check of the settings that depend on the rank count, which
// the Engine constructor applies (std::invalid_argument) and front ends call first, to name their flag.
enum class ConfigSetting { kSync, kEndTime };
struct ConfigProblem {
  ConfigSetting setting;
  std::string
      message;  // completes "<setting's name> <value> ...", e.g. "runs on exactly 1 rank (got 4); ..."
};
std::optional<ConfigProblem> check_config(const EngineConfig& config, int ranks);

// The uncommitted-event limit an optimistic rank starts with: config.max_uncommitted, or 16 GVT intervals
// when that is 0 (a memory budget may lower it during the run).
inline std::uint64_t uncommitted_limit(const EngineConfig& config) {
  return config.max_uncommitted != 0
             ? config.max_uncommitted
             : std::uint64_t{16} * (config.gvt_interval > 0 ? config.gvt_interval : 1);
}

}  // namespace warpsim
