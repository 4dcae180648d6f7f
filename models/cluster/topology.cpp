// The shared node-block layout of every topology family, and the family factory (see topology.hpp).
#include "models/cluster/topology.hpp"

#include <algorithm>
#include <stdexcept>

#include "models/cluster/fat_tree.hpp"
#include "models/cluster/torus.hpp"

namespace warpsim::cluster {

Topology::Topology(const ClusterParams& p) : params_(p) {
  if (p.nodes == 0 || p.gpus_per_node == 0)
    throw std::invalid_argument("topology: no nodes or no GPUs per node (validate the spec first)");
  gpus_ = p.nodes * p.gpus_per_node;
  node_block_ = 2 * p.gpus_per_node + (p.gpus_per_node > 1 ? 1 : 0);
  first_switch_ = p.nodes * node_block_;
  set_switch_count(0);
}

void Topology::set_switch_count(std::uint64_t switches) {
  first_storage_ = first_switch_ + switches;
  end_storage_ = first_storage_ + params_.storage_targets;
}

LpKind Topology::kind_of(LpId lp) const {
  if (lp < first_switch_) {
    const std::uint32_t within = lp % node_block_;
    if (within < params_.gpus_per_node) return LpKind::kGpu;
    if (within < 2 * params_.gpus_per_node) return LpKind::kNic;
    return LpKind::kNvSwitch;
  }
  if (lp < first_storage_) return switch_kind(lp);
  if (lp < end_storage_) return LpKind::kStorage;
  return LpKind::kFlowNetwork;
}

SwitchPlace Topology::switch_place(LpId lp) const {
  if (kind_of(lp) == LpKind::kNvSwitch) return {0, lp / node_block_};
  if (lp < first_switch_ || lp >= first_storage_) throw std::logic_error("topology: LP is not a switch");
  return family_switch_place(lp);
}

PortPeer Topology::nvswitch_peer(LpId nvswitch, std::uint32_t port) const {
  const std::uint32_t node = nvswitch / node_block_;
  return {nic_lp(node * params_.gpus_per_node + port), params_.nvlink};
}

SimTime Topology::node_min_latency() const {
  SimTime m = params_.injection_latency_ps;
  if (params_.gpus_per_node > 1) m = std::min(m, params_.nvlink.latency_ps);
  if (params_.storage_targets > 0) m = std::min(m, params_.storage_latency_ps);
  return m;
}
std::uint64_t Topology::port_base(LpId lp) const {
  const std::uint32_t R = params_.gpus_per_node;
  if (kind_of(lp) == LpKind::kNvSwitch) return std::uint64_t{lp / node_block_} * R;
  if (lp < first_switch_ || lp >= first_storage_) throw std::logic_error("topology: LP is not a switch");
  // The NVSwitches (one per node when R > 1) come first, then each family tier below lp's, whole.
  std::uint64_t base = R > 1 ? std::uint64_t{params_.nodes} * R : 0;
  LpId first = lp - switch_place(lp).index;  // first switch of lp's tier
  base += (lp - first) * port_count(lp);
  while (first > first_switch_) {
    const LpId last = first - 1;  // last switch of the tier below
    const std::uint64_t count = switch_place(last).index + 1;
    base += count * port_count(last);
    first = last + 1 - count;
  }
  return base;
}

std::uint64_t Topology::port_total() const {
  if (first_storage_ == first_switch_)
    return params_.gpus_per_node > 1 ? std::uint64_t{params_.nodes} * params_.gpus_per_node : 0;
  const LpId last = first_storage_ - 1;
  return port_base(last) + port_count(last);
}

std::unique_ptr<Topology> make_topology(const ClusterParams& params) {
  switch (params.topology) {
    case TopologyKind::kFatTree:
      return std::make_unique<FatTree>(params);
    case TopologyKind::kTorus:
      return std::make_unique<Torus>(params);
  }
  throw std::invalid_argument("topology: unknown family");
}

}  // namespace warpsim::cluster
