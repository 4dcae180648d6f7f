// Placing the jobs of a shared cluster (ExperimentSpec.jobs, docs/shared-clusters.md) on its GPUs: each
// policy picks GPUs from those the jobs before it left free, in list order. Node policies take whole nodes
// (rank r on GPU r % gpus_per_node of the job's node r / gpus_per_node, so NCCL's rail-aligned rings keep
// their rails); "explicit" takes the listed GPUs. A placement that cannot be made is a
// std::invalid_argument naming the field ("experiment spec: jobs[1].placement: ...").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/cluster/cluster_params.hpp"

namespace warpsim::experiment {

struct PlacementRequest {
  std::string policy;                 // packed | spread | topology | explicit
  std::uint32_t gpus = 0;             // the job's world size
  std::vector<std::uint32_t> listed;  // explicit: rank -> GPU
};

// The nodes a leaf group (all rails of one set of leaves) serves: the fat tree's leaf down ports; 1 for a
// torus (every node its own router).
std::uint32_t nodes_per_leaf_group(const cluster::ClusterParams& params);
// The nodes of one pod of a 3-tier fat tree (its leaf groups together); nodes_per_leaf_group otherwise.
std::uint32_t nodes_per_pod(const cluster::ClusterParams& params);

// Rank -> cluster GPU for one job; marks its GPUs in `used` (one flag per cluster GPU; node policies mark
// their whole nodes). `index` is the job's place in the jobs list, for the error's field.
std::vector<std::uint32_t> place_job(const cluster::ClusterParams& params, const PlacementRequest& request,
                                     int index, std::vector<bool>& used);

// Whether `gpus` (rank -> GPU) keeps the layout NCCL's rail-aligned rings assume: rank r on local GPU
// r % gpus_per_node, and the ranks of each block of gpus_per_node on one node.
bool node_aligned(const std::vector<std::uint32_t>& gpus, std::uint32_t gpus_per_node);

}  // namespace warpsim::experiment
