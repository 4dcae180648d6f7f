// Building a training run's partition (see training_partition.hpp).
#include "experiment/training_partition.hpp"

#include <stdexcept>

#include "experiment/setting_error.hpp"
#include "models/cluster/topology.hpp"
#include "partition/map_file.hpp"
#include "partition/partitioner.hpp"

namespace warpsim::experiment {

std::string partition_strategy_list() {
  std::string out;
  for (const auto& name : partition::partitioner_names()) out += (out.empty() ? "" : " | ") + name;
  return out;
}

std::string partition_label(const std::string& strategy, const std::string& map_file) {
  return map_file.empty() ? strategy : "map " + map_file;
}

std::unique_ptr<LpMap> make_training_partition(const std::string& strategy,
                                               const cluster::ClusterParams& params,
                                               const std::shared_ptr<const workload::Job>& job,
                                               std::uint32_t storage_targets, int ranks,
                                               training::Granularity granularity, const std::string& source) {
  const auto partitioner = partition::make_partitioner(strategy);
  if (!partitioner) {
    throw SettingError(source + ": unknown strategy '" + strategy + "' (expected " +
                       partition_strategy_list() + ")");
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
    throw SettingError(source + " " + strategy + ": " + e.what());
  }
}

std::unique_ptr<LpMap> make_training_partition(const std::string& strategy, const std::string& map_file,
                                               const cluster::ClusterParams& params,
                                               const std::shared_ptr<const workload::Job>& job,
                                               std::uint32_t storage_targets, int ranks,
                                               const std::string& source) {
  if (!map_file.empty()) {
    try {
      return std::make_unique<partition::RangeLpMap>(
          partition::read_map_file(map_file, cluster::make_topology(params)->lp_count(), ranks));
    } catch (const std::invalid_argument& e) {
      throw SettingError(std::string("--partition-map: ") + e.what());
    }
  }
  return make_training_partition(strategy, params, job, storage_targets, ranks,
                                 training::auto_granularity(params), source);
}

}  // namespace warpsim::experiment
