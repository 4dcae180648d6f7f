// Engine settings of the simulating commands (sync mode, seed, GVT/throttle knobs, partition strategy,
// checkpoints) as plain values, and their one conversion into the engine's EngineConfig, which checks each
// value once and names the flag or spec field it came from (SettingError). The command-line flags that
// fill these structs live with the front ends (jobs/cli/engine_options.hpp).
#pragma once

#include <cstdint>
#include <string>

#include "engine/kernel/engine_config.hpp"

namespace warpsim::experiment {

struct EngineOptions {
  std::string sync = "optimistic";
  std::int64_t seed = 1;
  std::int64_t gvt_interval = 4096;
  std::int64_t max_uncommitted = 0;
  // Resident bytes per rank to stay under, as typed ("512MiB"); empty = no budget
  // (EngineConfig::memory_budget_bytes).
  std::string memory_budget;
  double optimism_window = 0;             // in the command's time unit; 0 = off
  std::string optimism_control = "auto";  // auto | adaptive | fixed (EngineConfig::optimism_control)
  double rollback_target = 0.1;           // EngineConfig::rollback_target
  int idle_sleep_us = -1;                 // -1 = automatic (EngineConfig::idle_sleep_us)
  int poll_us = -1;                       // -1 = automatic (EngineConfig::poll_us)
  std::int64_t poll_interval = 16;
  std::int64_t batch = 256;
  double progress_seconds = 2.0;
  std::string partition = "block";
  // --shared-node: shrink | keep; empty = the WARPSIM_SHARED_NODE environment variable, else shrink
  // (jobs/cli/simulating_ranks.hpp).
  std::string shared_node;
  // Commands that build a model LP graph (warpsim run) also accept the graph strategies (topology, metis).
  bool graph_partitions = false;
};

// Where the settings a spec can also set came from, for error messages (experiment/settings.hpp): a flag
// ("--sync") or a spec field ("experiment spec: simulation.sync").
struct SettingSources {
  std::string sync = "--sync";
  std::string partition = "--partition";
};

// Checkpoint/restart settings (docs/checkpoint.md) of the simulating commands.
struct CheckpointOptions {
  std::string dir;           // --checkpoint-dir
  double at = 0;             // --checkpoint-at-ns (or the command's time unit); 0 = none
  double every_seconds = 0;  // --checkpoint-every-seconds; 0 = off
  bool stop = false;         // --stop-at-checkpoint
  std::string resume;        // --resume
};
// Exit code of a run that stopped after writing a checkpoint (on a signal, or --stop-at-checkpoint):
// not a failure, but the results are not there yet; the Slurm script requeues on it.
inline constexpr int kCheckpointStopExitCode = 3;

// Validates (SettingError naming the flag) and fills config.checkpoint; installs the SIGTERM/SIGUSR1
// handlers when checkpoints are written. time_unit_ps scales the `at_flag` time (e.g. "--checkpoint-at-ns").
void apply_checkpoint_options(const CheckpointOptions& options, const std::string& at_flag,
                              SimTime time_unit_ps, EngineConfig& config);

// Validates and converts; throws SettingError naming the flag or field. time_unit_ps scales
// --optimism-window. `ranks` is the run's rank count: what the engine refuses to run with on it (its own
// check_config, the authority) is reported here, before any model is built, naming the setting's source.
EngineConfig to_engine_config(const EngineOptions& options, SimTime end_time, SimTime time_unit_ps, int ranks,
                              const SettingSources& sources = {});

}  // namespace warpsim::experiment
