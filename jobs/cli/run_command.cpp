// `warpsim run SPEC`: simulates a training job (ExperimentSpec: cluster + job + simulation settings) on the
// packet-level cluster model and prints, on rank 0, the stable `key: value` summary users ask for: step
// time, tokens/s, TFLOP/s per GPU, MFU, the split of a step into compute, pipeline bubble and exposed
// communication, plus the engine's run statistics. Identical for every sync mode and rank count except the
// run-cost keys (wall seconds, event rate, rollbacks, peak rss). The work is experiment::run_training; this
// file is the command line around it.
#include <CLI/CLI.hpp>

#include <mpi.h>

#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "experiment/training_run.hpp"
#include "jobs/cli/command_registry.hpp"
#include "jobs/cli/engine_options.hpp"
#include "jobs/cli/run_flags.hpp"
#include "jobs/cli/simulating_ranks.hpp"

namespace warpsim::cli {

namespace {

// The value of `flag` when it was given on the command line.
template <class T>
std::optional<T> if_given(const CLI::App& cmd, const std::string& flag, const T& value) {
  return cmd.get_option(flag)->count() > 0 ? std::optional<T>(value) : std::nullopt;
}

int print_outcome(const experiment::RunOutcome& outcome, const experiment::RunRequest& request, int rank) {
  if (outcome.stopped_at_checkpoint) {
    if (rank == 0) {
      std::cout << "checkpoint: " << outcome.checkpoint_path << "\n"
                << "checkpoint simulated seconds: "
                << static_cast<double>(outcome.checkpoint_time) / static_cast<double>(kPicosPerSecond) << "\n"
                << "stopped: resume with --resume " << request.checkpoint.dir << "\n";
    }
    return experiment::kCheckpointStopExitCode;
  }
  if (rank == 0) outcome.report.print(std::cout);
  return 0;
}

}  // namespace

std::function<int()> add_run_command(CLI::App& app, const CommandEnv& env) {
  const int rank = env.rank;
  auto r = std::make_shared<experiment::RunRequest>();
  auto sample_interval_ns = std::make_shared<double>(0);
  CLI::App* cmd =
      app.add_subcommand("run", "Simulate a training job on a cluster (ExperimentSpec) and summarize");
  cmd->add_option("SPEC", r->spec_path, "experiment spec (protobuf text format, or JSON)")->required();
  cmd->add_flag("--attribute", r->attribute,
                "also attribute exposed communication per parallelism kind and the checkpoint stall (one "
                "more simulation per kind the job has, without that kind's traffic)");
  cmd->add_flag("--check", r->check_only, "validate the spec and print its size, without simulating");
  add_engine_options(*cmd, r->engine);
  add_run_partition_options(*cmd, r->engine, r->partition_map);
  add_run_output_options(*cmd, r->output, *sample_interval_ns);
  add_checkpoint_options(*cmd, r->checkpoint, "--checkpoint-at-ns");
  return [r, cmd, rank, sample_interval_ns]() -> int {
    if (!cmd->parsed()) return -1;
    // Flags the spec can also set: given ones override it (experiment/settings.hpp).
    r->given = {.sync = if_given(*cmd, "--sync", r->engine.sync),
                .seed = if_given(*cmd, "--seed", r->engine.seed),
                .partition = if_given(*cmd, "--partition", r->engine.partition),
                .sample_interval_ns = if_given(*cmd, "--sample-interval", *sample_interval_ns)};
    r->warn = [](const std::vector<std::string>& lines) {
      for (const std::string& line : lines) std::cerr << "warpsim: warning: " << line << '\n';
    };
    const bool checkpoints = !r->checkpoint.dir.empty() || !r->checkpoint.resume.empty();
    return on_simulating_ranks(r->engine, checkpoints, [&](MPI_Comm comm) {
      return print_outcome(experiment::run_training(*r, comm), *r, rank);
    });
  };
}

const CommandRegistrar kRegisterRun{"run", add_run_command};

}  // namespace warpsim::cli
