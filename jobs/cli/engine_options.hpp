// Engine flags shared by every simulating subcommand (--sync, --seed, GVT/throttle knobs), and the engine
// keys of their `key: value` reports.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

#include "engine/kernel/engine.hpp"
#include "engine/kernel/engine_config.hpp"
#include "io/key_value_report.hpp"

namespace warpsim::cli {

struct EngineOptions {
  std::string sync = "optimistic";
  std::int64_t seed = 1;
  std::int64_t gvt_interval = 4096;
  std::int64_t max_uncommitted = 0;
  double optimism_window = 0;             // in the command's time unit; 0 = off
  std::string optimism_control = "auto";  // auto | adaptive | fixed (EngineConfig::optimism_control)
  double rollback_target = 0.1;           // EngineConfig::rollback_target
  int idle_sleep_us = -1;                 // -1 = automatic (EngineConfig::idle_sleep_us)
  int poll_us = -1;                       // -1 = automatic (EngineConfig::poll_us)
  std::int64_t poll_interval = 16;
  std::int64_t batch = 256;
  double progress_seconds = 2.0;
  std::string partition = "block";
  // Commands that build a model LP graph (warpsim run) also accept the graph strategies (topology, metis).
  bool graph_partitions = false;
};

void add_engine_options(CLI::App& command, EngineOptions& options);

// Checkpoint/restart flags (docs/checkpoint.md) of the simulating subcommands.
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

// `at_flag` names the time flag (e.g. "--checkpoint-at-ns"), in the command's time unit.
void add_checkpoint_options(CLI::App& command, CheckpointOptions& options, const std::string& at_flag);
// Validates (UsageError naming the flag) and fills config.checkpoint; installs the SIGTERM/SIGUSR1
// handlers when checkpoints are written. time_unit_ps scales the --checkpoint-at flag.
void apply_checkpoint_options(const CheckpointOptions& options, const std::string& at_flag,
                              SimTime time_unit_ps, EngineConfig& config);
// Validates and converts; throws UsageError naming the flag. time_unit_ps scales --optimism-window.
EngineConfig to_engine_config(const EngineOptions& options, SimTime end_time, SimTime time_unit_ps);

// Adds the engine keys every simulating subcommand reports: events committed, events processed, events rolled
// back, efficiency (ROSS's definition: 100 x (1 - rolled back / committed)), rollbacks (episodes), remote
// events and remote event fraction (committed events that came from another rank), event rate, wall seconds,
// peak rss bytes, peak rss bytes total.
void add_engine_report(io::KeyValueReport& report, const RunResult& result);

}  // namespace warpsim::cli
