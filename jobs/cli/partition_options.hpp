// The LP -> rank map of a training run: `--partition STRATEGY` (or simulation.partition in the spec) or
// `--partition-map FILE`, built from the job's LP graph (models/training/lp_graph.hpp) at the granularity
// the strategy needs: none for block and round-robin, vertices only (auto granularity) for topology, the
// weighted graph for METIS. Every rank builds the same map on its own (all strategies are deterministic), so
// no rank waits for another and no map travels over MPI.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine/kernel/lp_map.hpp"
#include "jobs/cli/engine_options.hpp"
#include "models/cluster/cluster_params.hpp"
#include "models/training/lp_graph.hpp"
#include "models/workload/job.hpp"

namespace warpsim::cli {

// "block | round-robin | topology | metis", for help texts and error messages.
std::string partition_strategy_list();

// For `warpsim run`: lets --partition take every strategy and adds --partition-map FILE.
void add_run_partition_options(CLI::App& command, EngineOptions& engine, std::string& map_file);
// The spec's simulation.partition applies unless --partition was given; an unknown name is a spec error.
// Returns the name of the setting the strategy came from (for error messages).
std::string apply_spec_partition(EngineOptions& engine, const std::string& spec_value, bool flag_given);
// What the report's `partition` key says: the strategy, or "map FILE".
std::string partition_label(const EngineOptions& engine, const std::string& map_file);

// Throws UsageError naming `flag` for an unknown strategy, an unusable map file or an impossible rank count.
std::unique_ptr<LpMap> make_training_partition(const std::string& strategy, const std::string& map_file,
                                               const cluster::ClusterParams& params,
                                               const std::shared_ptr<const workload::Job>& job,
                                               std::uint32_t storage_targets, int ranks,
                                               const std::string& flag = "--partition");

// The same with an explicit granularity (lp | node | group), for `warpsim partition`.
std::unique_ptr<LpMap> make_training_partition(const std::string& strategy,
                                               const cluster::ClusterParams& params,
                                               const std::shared_ptr<const workload::Job>& job,
                                               std::uint32_t storage_targets, int ranks,
                                               training::Granularity granularity, const std::string& flag);

}  // namespace warpsim::cli
