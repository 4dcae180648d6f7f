// Building a training run's partition (see partition_options.hpp).
#include "jobs/cli/partition_options.hpp"

#include <stdexcept>

#include "jobs/cli/usage_error.hpp"
#include "models/cluster/topology.hpp"
#include "partition/map_file.hpp"
#include "partition/partitioner.hpp"

namespace warpsim::cli {

std::string partition_strategy_list() {
  std::string out;
  for (const auto& name : partition::partitioner_names()) out += (out.empty() ? "" : " | ") + name;
  return out;
}

void add_run_partition_options(CLI::App& command, EngineOptions& engine, std::string& map_file) {
  engine.graph_partitions = true;
  command.get_option("--partition")->description("LP to rank mapping: " + partition_strategy_list());
  command
      .add_option("--partition-map", map_file,
                  "LP to rank map file written by `warpsim partition --write-map` (instead of --partition)")
      ->excludes("--partition");
}

std::string apply_spec_partition(EngineOptions& engine, const std::string& spec_value, bool flag_given) {
  if (flag_given || spec_value.empty()) return "--partition";
  if (!partition::make_partitioner(spec_value)) {
    throw UsageError("experiment spec: simulation.partition: unknown strategy '" + spec_value +
                     "' (expected " + partition_strategy_list() + ")");
  }
  engine.partition = spec_value;
  return "simulation.partition";
}

std::string partition_label(const EngineOptions& engine, const std::string& map_file) {
  return map_file.empty() ? engine.partition : "map " + map_file;
}

std::unique_ptr<LpMap> make_training_partition(const std::string& strategy,
                                               const cluster::ClusterParams& params,
                                               const std::shared_ptr<const workload::Job>& job,
                                               std::uint32_t storage_targets, int ranks,
                                               training::Granularity granularity, const std::string& flag) {
  const auto partitioner = partition::make_partitioner(strategy);
  if (!partitioner) {
    throw UsageError(flag + ": unknown strategy '" + strategy + "' (expected " + partition_strategy_list() +
                     ")");
  }
  try {
    partition::PartitionGraph graph;
    if (partitioner->needs() == partition::GraphNeeds::kNone) {
      graph.lp_count = cluster::make_topology(params)->lp_count();
    } else {
      graph = training::build_lp_graph(params, job, storage_targets, granularity,
                                       partitioner->needs() == partition::GraphNeeds::kEdges);
    }
    return partitioner->partition(graph, ranks);
  } catch (const std::invalid_argument& e) {
    throw UsageError(flag + " " + strategy + ": " + e.what());
  }
}

std::unique_ptr<LpMap> make_training_partition(const std::string& strategy, const std::string& map_file,
                                               const cluster::ClusterParams& params,
                                               const std::shared_ptr<const workload::Job>& job,
                                               std::uint32_t storage_targets, int ranks,
                                               const std::string& flag) {
  if (!map_file.empty()) {
    try {
      return std::make_unique<partition::RangeLpMap>(
          partition::read_map_file(map_file, cluster::make_topology(params)->lp_count(), ranks));
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--partition-map: ") + e.what());
    }
  }
  return make_training_partition(strategy, params, job, storage_targets, ranks,
                                 training::auto_granularity(params), flag);
}

}  // namespace warpsim::cli
