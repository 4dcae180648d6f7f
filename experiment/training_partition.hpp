// The LP -> rank map of a training run: a strategy (--partition or simulation.partition, resolved by
// settings.hpp) or a map file (--partition-map), built from the job's LP graph (experiment/lp_graph.hpp) at
// the granularity the strategy needs: none for block and round-robin, vertices only (auto granularity) for
// topology, the weighted graph for METIS. Every rank builds the same map on its own (all strategies are
// deterministic), so no rank waits for another and no map travels over MPI.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine/kernel/lp_map.hpp"
#include "experiment/lp_graph.hpp"
#include "models/cluster/cluster_params.hpp"
#include "models/workload/job.hpp"

namespace warpsim::experiment {

// "block | round-robin | topology | metis", for help texts and error messages.
std::string partition_strategy_list();
// What the report's `partition` key says: the strategy, or "map FILE".
std::string partition_label(const std::string& strategy, const std::string& map_file);

// Throws SettingError naming `source` (the flag or spec field of the strategy) for an unknown strategy or
// an impossible rank count, or naming --partition-map for an unusable map file.
std::unique_ptr<LpMap> make_training_partition(const std::string& strategy, const std::string& map_file,
                                               const cluster::ClusterParams& params,
                                               const std::shared_ptr<const workload::Job>& job,
                                               std::uint32_t storage_targets, int ranks,
                                               const std::string& source = "--partition");

// The same with an explicit granularity (lp | node | group), for `warpsim partition`.
std::unique_ptr<LpMap> make_training_partition(const std::string& strategy,
                                               const cluster::ClusterParams& params,
                                               const std::shared_ptr<const workload::Job>& job,
                                               std::uint32_t storage_targets, int ranks,
                                               training::Granularity granularity, const std::string& source);

}  // namespace warpsim::experiment
