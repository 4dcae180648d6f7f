// The interface every cluster topology family implements (fat-tree, torus), and the LP id layout they share.
// LP types, the series and the energy inventory only ask these questions, so a new family needs no change
// in them. Every answer is arithmetic on the parameters: no rank holds a table of the cluster.
//
// Shared LP id layout (dense): node-major first, so that a block partition keeps a node's GPUs, NICs and
// NVSwitch on one rank: node n owns ids [n*b, (n+1)*b) with b = 2R (+1 if R > 1): its R GPUs, its R NICs
// (NIC i serves GPU i), its NVSwitch. Then the family's switches, then the storage targets, then (flow
// fidelity only) the flow network LP.
#pragma once

#include <cstdint>
#include <memory>

#include "engine/sim_time.hpp"
#include "models/cluster/cluster_params.hpp"

namespace warpsim::cluster {

// kLeaf/kTier1/kCore: fat-tree tiers; kRouter: a torus router (one per node).
enum class LpKind : std::uint8_t {
  kGpu,
  kNic,
  kNvSwitch,
  kLeaf,
  kTier1,
  kCore,
  kStorage,
  kFlowNetwork,
  kRouter
};

// What sits behind an output port.
struct PortPeer {
  LpId lp;
  LinkParams link;
};

// Where a switch sits, for the series' topology columns: tier 0 = NVSwitch (index = node), then the family's
// tiers from the NICs upwards (fat-tree: 1 leaf, 2 spine/aggregation, 3 core; torus: 1 router).
struct SwitchPlace {
  int tier = 0;
  std::uint64_t index = 0;
};

class Topology {
 public:
  virtual ~Topology() = default;

  std::uint32_t gpus() const { return gpus_; }
  std::uint64_t lp_count() const { return end_storage_ + (has_flow_network() ? 1 : 0); }
  bool has_flow_network() const { return params_.fidelity == Fidelity::kFlow; }
  LpId flow_network_lp() const { return end_storage_; }
  const ClusterParams& params() const { return params_; }

  LpId gpu_lp(std::uint32_t gpu) const { return node_of(gpu) * node_block_ + gpu % params_.gpus_per_node; }
  LpId nic_lp(std::uint32_t gpu) const { return gpu_lp(gpu) + params_.gpus_per_node; }
  LpId nvswitch_lp(std::uint32_t node) const { return node * node_block_ + 2 * params_.gpus_per_node; }
  // The GPU that a GPU or NIC LP belongs to.
  std::uint32_t gpu_of(LpId lp) const {
    return lp / node_block_ * params_.gpus_per_node + lp % node_block_ % params_.gpus_per_node;
  }
  std::uint32_t node_of(std::uint32_t gpu) const { return gpu / params_.gpus_per_node; }
  LpId storage_lp(std::uint32_t target) const { return first_storage_ + target; }
  // LP ids of the family's switches: [first_switch_lp(), storage_lp(0)).
  LpId first_switch_lp() const { return first_switch_; }

  LpKind kind_of(LpId lp) const;
  SwitchPlace switch_place(LpId lp) const;
  // Index (within tier 1) of the switch that GPU `gpu`'s NIC attaches to: its leaf, or its node's router.
  virtual std::uint32_t edge_switch_of(std::uint32_t gpu) const = 0;
  virtual std::uint32_t port_count(LpId lp) const = 0;  // output ports of a NIC or switch
  virtual PortPeer peer(LpId lp, std::uint32_t port) const = 0;
  // Whether a cable is behind the port. A fat tree whose node count does not fill its last leaf (or pod)
  // leaves some down ports empty; peer() of such a port names no real neighbour. Default: every port is.
  virtual bool port_connected(LpId, std::uint32_t) const { return true; }
  // Output port that a packet from GPU `src` to GPU `dst` with ECMP hash `flow_hash` leaves `lp` by.
  virtual std::uint32_t route(LpId lp, std::uint32_t src, std::uint32_t dst,
                              std::uint64_t flow_hash) const = 0;
  // Smallest latency of any hop between two LPs (the conservative lookahead).
  virtual SimTime min_latency() const = 0;

  // Dense numbering of every switch port of the cluster (the series' switch_port ids): the ports of all
  // switches in ascending LP id, port p of switch `lp` being port_base(lp) + p; port_total() ports in all.
  // Arithmetic (O(tiers)), relying on what every family guarantees: a switch's port count depends only on
  // its kind, and the family's tiers occupy consecutive id ranges in ascending tier order.
  std::uint64_t port_base(LpId lp) const;
  std::uint64_t port_total() const;

 protected:
  // Lays out the node blocks; the family then calls set_switch_count() once it knows its switches.
  explicit Topology(const ClusterParams& params);
  void set_switch_count(std::uint64_t switches);
  // Kind and place of a switch LP id in [first_switch_lp(), storage_lp(0)).
  virtual LpKind switch_kind(LpId lp) const = 0;
  virtual SwitchPlace family_switch_place(LpId lp) const = 0;
  std::uint32_t node_block() const { return node_block_; }
  // Port and peer answers every family shares: a NIC's ports (0: scale-out, 1: NVLink) and the NVSwitch.
  PortPeer nvswitch_peer(LpId nvswitch, std::uint32_t port) const;
  SimTime node_min_latency() const;

 private:
  ClusterParams params_;
  std::uint32_t gpus_;
  std::uint32_t node_block_;  // LP ids per node
  LpId first_switch_, first_storage_ = 0, end_storage_ = 0;
};

// The topology the parameters name (params.topology), validated by its constructor.
std::unique_ptr<Topology> make_topology(const ClusterParams& params);

}  // namespace warpsim::cluster
