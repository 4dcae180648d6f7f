// Shared engine flags (see engine_options.hpp).
#include "jobs/cli/engine_options.hpp"

#include <cmath>
#include <filesystem>

#include "engine/kernel/checkpoint_signal.hpp"
#include "jobs/cli/usage_error.hpp"

namespace warpsim::cli {

void add_engine_options(CLI::App& command, EngineOptions& o) {
  command.add_option("--sync", o.sync, "sequential | conservative | optimistic")->capture_default_str();
  command.add_option("--seed", o.seed, "random seed (results depend only on it and the model)")
      ->capture_default_str();
  command.add_option("--gvt-interval", o.gvt_interval, "events a rank handles between GVT rounds")
      ->capture_default_str();
  command
      .add_option(
          "--max-uncommitted", o.max_uncommitted,
          "optimism throttle: uncommitted events per rank before it waits for GVT (0 = 16 x gvt-interval)")
      ->capture_default_str();
  command
      .add_option("--optimism-window", o.optimism_window,
                  "optimism throttle: time units beyond GVT a rank may run ahead (0 = unlimited)")
      ->capture_default_str();
  command
      .add_option(
          "--optimism-control", o.optimism_control,
          "optimism throttle: adaptive (a window of simulated time beyond GVT per rank that halves while "
          "much of its work is rolled back) | fixed (only max-uncommitted) | auto (adaptive when the node "
          "runs more ranks than CPUs, else fixed)")
      ->capture_default_str();
  command
      .add_option("--rollback-target", o.rollback_target,
                  "adaptive optimism control: rolled-back share of a rank's events above which it halves its "
                  "window, in (0, 1)")
      ->capture_default_str();
  command
      .add_option("--idle-sleep-us", o.idle_sleep_us,
                  "optimistic: microseconds an idle rank sleeps between polls (-1 = 50 when the node runs "
                  "more ranks than CPUs, else 0 = spin)")
      ->capture_default_str();
  command.add_option("--poll-interval", o.poll_interval, "events handled between network polls")
      ->capture_default_str();
  command
      .add_option(
          "--poll-us", o.poll_us,
          "optimistic: wall microseconds at least between network polls while a rank has events to "
          "run (-1 = 100 when the node runs more ranks than CPUs, else 0 = every poll-interval events)")
      ->capture_default_str();
  command.add_option("--batch", o.batch, "events per MPI message at most")->capture_default_str();
  command.add_option("--progress-seconds", o.progress_seconds, "seconds between progress lines (0 = none)")
      ->capture_default_str();
  command.add_option("--partition", o.partition, "LP to rank mapping: block | round-robin")
      ->capture_default_str();
}

void add_checkpoint_options(CLI::App& command, CheckpointOptions& o, const std::string& at_flag) {
  command.add_option(
      "--checkpoint-dir", o.dir,
      "write simulation checkpoints under DIR (on SIGTERM/SIGUSR1, and at the times below); see "
      "docs/checkpoint.md");
  command.add_option(at_flag, o.at, "write a checkpoint once the simulation has reached this time");
  command.add_option("--checkpoint-every-seconds", o.every_seconds,
                     "write a checkpoint about every this many wall-clock seconds");
  command.add_flag("--stop-at-checkpoint", o.stop,
                   "exit (code 3) after writing the first checkpoint instead of continuing");
  command.add_option(
      "--resume", o.resume,
      "continue from the newest complete checkpoint in DIR (same spec, seed, ranks and partition)");
}

void apply_checkpoint_options(const CheckpointOptions& o, const std::string& at_flag, SimTime time_unit_ps,
                              EngineConfig& config) {
  const bool writes = !o.dir.empty();
  if (!writes && o.at != 0) throw UsageError(at_flag + " needs --checkpoint-dir");
  if (!writes && o.every_seconds != 0) throw UsageError("--checkpoint-every-seconds needs --checkpoint-dir");
  if (!writes && o.stop) throw UsageError("--stop-at-checkpoint needs --checkpoint-dir");
  if (!(o.at >= 0) || !std::isfinite(o.at)) throw UsageError(at_flag + " must be a finite time > 0");
  if (!(o.every_seconds >= 0) || !std::isfinite(o.every_seconds))
    throw UsageError("--checkpoint-every-seconds must be a finite number of seconds > 0");
  if (writes && std::filesystem::exists(o.dir) && !std::filesystem::is_directory(o.dir))
    throw UsageError("--checkpoint-dir: '" + o.dir + "' exists and is not a directory");
  if (!o.resume.empty() && !std::filesystem::is_directory(o.resume))
    throw UsageError("--resume: '" + o.resume + "' is not a directory");
  CheckpointConfig& c = config.checkpoint;
  c.dir = o.dir;
  if (o.at > 0) {
    c.at = static_cast<SimTime>(std::llround(o.at * static_cast<double>(time_unit_ps)));
    if (c.at == 0) throw UsageError(at_flag + " is below one picosecond");
  }
  c.every_seconds = o.every_seconds;
  c.stop_after_first = o.stop;
  c.resume = o.resume;
  c.on_signal = writes;
  if (writes) install_checkpoint_signal_handlers();
}

namespace {
void require_positive(std::int64_t value, const char* flag) {
  if (value < 1) throw UsageError(std::string(flag) + " must be >= 1 (got " + std::to_string(value) + ")");
}
}  // namespace

EngineConfig to_engine_config(const EngineOptions& o, SimTime end_time, SimTime time_unit_ps) {
  EngineConfig c;
  const auto mode = parse_sync_mode(o.sync);
  if (!mode)
    throw UsageError("--sync: unknown mode '" + o.sync +
                     "' (expected sequential, conservative or optimistic)");
  c.sync = *mode;
  if (o.seed < 0) throw UsageError("--seed must be >= 0 (got " + std::to_string(o.seed) + ")");
  c.seed = static_cast<std::uint64_t>(o.seed);
  require_positive(o.gvt_interval, "--gvt-interval");
  require_positive(o.poll_interval, "--poll-interval");
  require_positive(o.batch, "--batch");
  if (o.max_uncommitted < 0) {
    throw UsageError("--max-uncommitted must be >= 0 (got " + std::to_string(o.max_uncommitted) + ")");
  }
  if (!(o.optimism_window >= 0) || !std::isfinite(o.optimism_window)) {
    throw UsageError("--optimism-window must be a finite number >= 0");
  }
  if (o.optimism_control != "auto" && o.optimism_control != "adaptive" && o.optimism_control != "fixed")
    throw UsageError("--optimism-control: unknown mode '" + o.optimism_control +
                     "' (expected auto, adaptive or fixed)");
  if (!(o.rollback_target > 0 && o.rollback_target < 1))
    throw UsageError("--rollback-target must be a share in (0, 1) (got " + std::to_string(o.rollback_target) +
                     ")");
  if (o.idle_sleep_us < -1 || o.idle_sleep_us > 1000000)
    throw UsageError("--idle-sleep-us must be -1 (automatic) or 0..1000000 (got " +
                     std::to_string(o.idle_sleep_us) + ")");
  if (o.poll_us < -1 || o.poll_us > 1000000)
    throw UsageError("--poll-us must be -1 (automatic) or 0..1000000 (got " + std::to_string(o.poll_us) +
                     ")");
  if (!(o.progress_seconds >= 0)) throw UsageError("--progress-seconds must be >= 0");
  const bool graph_strategy =
      o.partition == "topology" || o.partition == "topology-striped" || o.partition == "metis";
  if (o.partition != "block" && o.partition != "round-robin" && !(graph_strategy && o.graph_partitions)) {
    throw UsageError("--partition: unknown strategy '" + o.partition + "' (expected block, round-robin" +
                     (o.graph_partitions ? ", topology, topology-striped or metis)"
                                         : " or, for warpsim run, topology, topology-striped or metis)"));
  }
  c.gvt_interval = static_cast<std::uint32_t>(o.gvt_interval);
  c.poll_interval = static_cast<std::uint32_t>(o.poll_interval);
  c.batch = static_cast<std::uint32_t>(o.batch);
  c.max_uncommitted = static_cast<std::uint64_t>(o.max_uncommitted);
  c.optimism_control = o.optimism_control == "adaptive" ? OptimismControlMode::kAdaptive
                       : o.optimism_control == "fixed"  ? OptimismControlMode::kFixed
                                                        : OptimismControlMode::kAuto;
  c.rollback_target = o.rollback_target;
  c.optimism_window =
      o.optimism_window == 0
          ? kTimeInfinity
          : static_cast<SimTime>(std::llround(o.optimism_window * static_cast<double>(time_unit_ps)));
  c.progress_seconds = o.progress_seconds;
  c.idle_sleep_us = o.idle_sleep_us;
  c.poll_us = o.poll_us;
  c.end_time = end_time;
  return c;
}

void add_engine_report(io::KeyValueReport& report, const RunResult& result) {
  const EngineStats& t = result.total;
  report.add("events committed", t.committed);
  report.add("events processed", t.processed);
  report.add("events rolled back", t.rolled_back);
  const double efficiency =
      t.committed == 0
          ? 100.0
          : 100.0 * (1.0 - static_cast<double>(t.rolled_back) / static_cast<double>(t.committed));
  report.add("efficiency", efficiency, 2);
  report.add("rollbacks", t.rollbacks);
  // Committed events that crossed ranks: what the partition costs (0 on one rank).
  report.add("remote events", t.committed_remote);
  report.add(
      "remote event fraction",
      t.committed == 0 ? 0.0 : static_cast<double>(t.committed_remote) / static_cast<double>(t.committed), 4);
  // A resumed run's wall time is its own, so only the events it committed itself count for its rate.
  const double rate = result.wall_seconds > 0
                          ? static_cast<double>(t.committed - result.resumed_committed) / result.wall_seconds
                          : 0.0;
  report.add("event rate", rate, 0);
  report.add("wall seconds", result.wall_seconds, 3);
  report.add("peak rss bytes", result.peak_rss_bytes_max);
  report.add("peak rss bytes total", result.peak_rss_bytes_sum);
}

}  // namespace warpsim::cli
