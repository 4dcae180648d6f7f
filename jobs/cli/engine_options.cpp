// The engine flags of the simulating subcommands (see engine_options.hpp).
#include "jobs/cli/engine_options.hpp"

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
  command.add_option(
      "--memory-budget", o.memory_budget,
      "resident memory each rank should stay under, e.g. 512MiB or 4GiB: an optimistic rank "
      "sets its uncommitted-event limit from it, `warpsim run` refuses a run predicted not to fit, "
      "and the report says whether the peak stayed under it (docs/running.md, 'Memory budget')");
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
  command.add_option(
      "--shared-node", o.shared_node,
      "shrink: when other processes keep this node's CPUs busy, simulate on only as many ranks "
      "per node as it has free CPUs (the others wait) | keep: every rank simulates (default: "
      "$WARPSIM_SHARED_NODE, else shrink)");
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

}  // namespace warpsim::cli
