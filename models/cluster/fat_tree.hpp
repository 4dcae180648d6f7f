// Arithmetic rail-optimized fat-tree (2 or 3 tiers) with one NVSwitch scale-up domain per node.
// Every question (kind of an LP, ports of a switch, the neighbour behind a port, the output port towards a
// destination) is answered by arithmetic on the parameters: no rank holds a table of the cluster, so a
// distributed run builds only the LPs it owns.
//
// LP ids: the node blocks of topology.hpp, then leaves | tier-1 switches (spines, or aggregation switches in
// 3 tiers) | cores (3 tiers) | storage targets.
// Rail-optimized: NIC r of node n attaches to leaf (n / down) * gpus_per_node + r, so the leaves of one
// node group (all rails) are consecutive and share a pod in 3 tiers. ECMP: a leaf (and an aggregation switch)
// picks its up port from the packet's flow hash, so routing is deterministic.
#pragma once

#include <cstdint>

#include "models/cluster/topology.hpp"

namespace warpsim::cluster {

class FatTree final : public Topology {
 public:
  explicit FatTree(const ClusterParams& params);

  std::uint32_t port_count(LpId lp) const override;
  PortPeer peer(LpId lp, std::uint32_t port) const override;
  bool port_connected(LpId lp, std::uint32_t port) const override;
  std::uint32_t route(LpId lp, std::uint32_t src, std::uint32_t dst, std::uint64_t flow_hash) const override;
  SimTime min_latency() const override;
  std::uint32_t edge_switch_of(std::uint32_t gpu) const override { return leaf_of_gpu(gpu); }

  LpId leaf_lp(std::uint32_t leaf) const { return first_leaf_ + leaf; }
  LpId tier1_lp(std::uint32_t index) const { return first_tier1_ + index; }
  LpId core_lp(std::uint32_t index) const { return first_core_ + index; }
  std::uint32_t leaf_of_gpu(std::uint32_t gpu) const;
  std::uint32_t leaf_count() const { return leaves_; }
  std::uint32_t down_ports() const { return down_; }
  std::uint32_t up_ports() const { return up_; }

 private:
  LpKind switch_kind(LpId lp) const override;
  SwitchPlace family_switch_place(LpId lp) const override;

  std::uint32_t down_, up_;       // leaf ports towards NICs / towards tier 1
  std::uint32_t leaves_;          // node groups x rails
  std::uint32_t pod_leaves_ = 0;  // 3 tiers: leaves per pod (aggregation down ports)
  std::uint32_t agg_up_ = 0;      // 3 tiers: aggregation up ports (cores per core group)
  std::uint32_t pods_ = 0;
  LpId first_leaf_, first_tier1_, first_core_;
};

}  // namespace warpsim::cluster
