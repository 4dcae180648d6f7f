// Arithmetic rail-optimized fat-tree (2 or 3 tiers) with one NVSwitch scale-up domain per node.
// Every question (LP id layout, kind of an LP, ports of a switch, the neighbour behind a port, the output
// port towards a destination) is answered by arithmetic on the parameters: no rank holds a table of the
// cluster, so a distributed run builds only the LPs it owns.
//
// LP id layout (dense): node-major first, so that a block partition keeps a node's GPUs, NICs and NVSwitch
// on one rank (most events stay local): node n owns ids [n*b, (n+1)*b) with b = 2R (+1 if R > 1):
// its R GPUs, its R NICs (NIC i serves GPU i), its NVSwitch. Then leaves | tier-1 switches (spines, or
// aggregation switches in 3 tiers) | cores (3 tiers) | storage targets.
// Rail-optimized: NIC r of node n attaches to leaf (n / down) * gpus_per_node + r, so the leaves of one
// node group (all rails) are consecutive and share a pod in 3 tiers. Flow fidelity adds one last LP, the
// flow network (flow_network.hpp).
#pragma once

#include <cstdint>

#include "engine/sim_time.hpp"
#include "models/cluster/cluster_params.hpp"

namespace warpsim::cluster {

enum class LpKind : std::uint8_t { kGpu, kNic, kNvSwitch, kLeaf, kTier1, kCore, kStorage, kFlowNetwork };

// What sits behind an output port.
struct PortPeer {
  LpId lp;
  LinkParams link;
};

class FatTree {
 public:
  explicit FatTree(const ClusterParams& params);

  std::uint32_t gpus() const { return gpus_; }
  std::uint64_t lp_count() const { return end_storage_ + (has_flow_network() ? 1 : 0); }
  bool has_flow_network() const { return params_.fidelity == Fidelity::kFlow; }
  LpId flow_network_lp() const { return end_storage_; }
  LpKind kind_of(LpId lp) const;
  std::uint32_t port_count(LpId lp) const;  // output ports of a NIC or switch
  PortPeer peer(LpId lp, std::uint32_t port) const;
  // Output port that a packet from GPU `src` to GPU `dst` with ECMP hash `flow_hash` leaves `lp` by.
  std::uint32_t route(LpId lp, std::uint32_t src, std::uint32_t dst, std::uint64_t flow_hash) const;

  LpId gpu_lp(std::uint32_t gpu) const { return node_of(gpu) * node_block_ + gpu % params_.gpus_per_node; }
  LpId nic_lp(std::uint32_t gpu) const { return gpu_lp(gpu) + params_.gpus_per_node; }
  LpId nvswitch_lp(std::uint32_t node) const { return node * node_block_ + 2 * params_.gpus_per_node; }
  // The GPU that a GPU or NIC LP belongs to.
  std::uint32_t gpu_of(LpId lp) const {
    return lp / node_block_ * params_.gpus_per_node + lp % node_block_ % params_.gpus_per_node;
  }
  LpId leaf_lp(std::uint32_t leaf) const { return first_leaf_ + leaf; }
  LpId tier1_lp(std::uint32_t index) const { return first_tier1_ + index; }
  LpId core_lp(std::uint32_t index) const { return first_core_ + index; }
  LpId storage_lp(std::uint32_t target) const { return first_storage_ + target; }
  std::uint32_t leaf_of_gpu(std::uint32_t gpu) const;
  std::uint32_t node_of(std::uint32_t gpu) const { return gpu / params_.gpus_per_node; }
  std::uint32_t leaf_count() const { return leaves_; }
  std::uint32_t down_ports() const { return down_; }
  std::uint32_t up_ports() const { return up_; }
  // Smallest latency of any hop between two LPs (the conservative lookahead).
  SimTime min_latency() const;
  const ClusterParams& params() const { return params_; }

 private:
  ClusterParams params_;
  std::uint32_t gpus_;
  std::uint32_t down_, up_;       // leaf ports towards NICs / towards tier 1
  std::uint32_t leaves_;          // node groups x rails
  std::uint32_t pod_leaves_ = 0;  // 3 tiers: leaves per pod (aggregation down ports)
  std::uint32_t agg_up_ = 0;      // 3 tiers: aggregation up ports (cores per core group)
  std::uint32_t pods_ = 0;
  std::uint32_t node_block_;  // LP ids per node
  LpId first_leaf_, first_tier1_, first_core_, first_storage_, end_storage_;
};

}  // namespace warpsim::cluster
