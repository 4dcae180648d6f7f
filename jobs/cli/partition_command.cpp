// `warpsim partition SPEC --ranks N [--strategy S] [--write-map FILE]`: computes the LP -> rank map a
// `warpsim run` of the experiment would use and reports its quality on the job's expected traffic: edge cut
// (fraction of the expected message weight, events per step, that crosses ranks), load imbalance (max rank
// weight / mean) and what each rank holds. --write-map saves the map for `warpsim run --partition-map`. The
// work is experiment::partition_report; this file is the command line around it.
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>
#include <string>

#include "experiment/partition_report.hpp"
#include "experiment/training_partition.hpp"
#include "jobs/cli/command_registry.hpp"

namespace warpsim::cli {

std::function<int()> add_partition_command(CLI::App& app, const CommandEnv& env) {
  const int rank = env.rank;
  auto o = std::make_shared<experiment::PartitionRequest>();
  CLI::App* cmd = app.add_subcommand(
      "partition",
      "Compute an experiment's LP -> rank map and report its edge cut, imbalance and per-rank counts");
  cmd->add_option("SPEC", o->spec_path, "experiment spec (protobuf text format, or JSON)")->required();
  cmd->add_option("--ranks", o->ranks, "number of MPI ranks to partition for")->required();
  cmd->add_option("--strategy", o->strategy, experiment::partition_strategy_list())->capture_default_str();
  cmd->add_option(
         "--granularity", o->granularity,
         "graph the topology/METIS strategies work on: auto (node, or group for huge clusters) | lp | "
         "node | group")
      ->capture_default_str();
  cmd->add_option("--write-map", o->write_map, "write the map to FILE (for warpsim run --partition-map)");
  return [o, cmd, rank]() -> int {
    if (!cmd->parsed()) return -1;
    const io::KeyValueReport report = experiment::partition_report(*o, rank);
    if (rank == 0) report.print(std::cout);
    return 0;
  };
}

const CommandRegistrar kRegisterPartition{"partition", add_partition_command};

}  // namespace warpsim::cli
