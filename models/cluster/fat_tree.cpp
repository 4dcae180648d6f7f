// Arithmetic fat-tree (see fat_tree.hpp).
#include "models/cluster/fat_tree.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "engine/hash.hpp"

namespace warpsim::cluster {

namespace {
std::uint32_t ceil_div(std::uint64_t a, std::uint64_t b) {
  return static_cast<std::uint32_t>((a + b - 1) / b);
}
}  // namespace

FatTree::FatTree(const ClusterParams& p) : Topology(p) {
  if (p.radix < 2 || (p.tiers != 2 && p.tiers != 3)) {
    throw std::invalid_argument("fat tree: invalid parameters (validate the spec first)");
  }
  up_ = static_cast<std::uint32_t>(std::llround(p.radix / (1.0 + p.oversubscription)));
  down_ = p.radix - up_;
  if (up_ == 0 || down_ == 0)
    throw std::invalid_argument("fat_tree.oversubscription: no up or down ports left");
  leaves_ = ceil_div(p.nodes, down_) * p.gpus_per_node;
  std::uint32_t tier1 = 0, cores = 0;
  if (p.tiers == 2) {
    if (leaves_ > p.radix) throw std::invalid_argument("fat_tree.radix: too small for the GPU count");
    tier1 = up_;
  } else {
    pod_leaves_ = p.radix / 2;
    agg_up_ = p.radix - pod_leaves_;
    pods_ = ceil_div(leaves_, pod_leaves_);
    if (pods_ > p.radix) throw std::invalid_argument("fat_tree.radix: too small for the GPU count");
    tier1 = pods_ * up_;
    cores = up_ * agg_up_;
  }
  first_leaf_ = first_switch_lp();
  first_tier1_ = first_leaf_ + leaves_;
  first_core_ = first_tier1_ + tier1;
  set_switch_count(std::uint64_t{leaves_} + tier1 + cores);
}

LpKind FatTree::switch_kind(LpId lp) const {
  if (lp < first_tier1_) return LpKind::kLeaf;
  if (lp < first_core_) return LpKind::kTier1;
  return LpKind::kCore;
}

SwitchPlace FatTree::family_switch_place(LpId lp) const {
  if (lp < first_tier1_) return {1, lp - first_leaf_};
  if (lp < first_core_) return {2, lp - first_tier1_};
  return {3, lp - first_core_};
}

std::uint32_t FatTree::leaf_of_gpu(std::uint32_t gpu) const {
  return node_of(gpu) / down_ * params().gpus_per_node + gpu % params().gpus_per_node;
}

std::uint32_t FatTree::port_count(LpId lp) const {
  switch (kind_of(lp)) {
    case LpKind::kNic:
      return params().gpus_per_node > 1 ? 2 : 1;  // 0: scale-out (leaf), 1: NVLink (NVSwitch)
    case LpKind::kNvSwitch:
      return params().gpus_per_node;
    case LpKind::kLeaf:
      return down_ + up_;
    case LpKind::kTier1:
      return params().tiers == 2 ? leaves_ : pod_leaves_ + agg_up_;
    case LpKind::kCore:
      return pods_;
    default:
      return 0;
  }
}

PortPeer FatTree::peer(LpId lp, std::uint32_t port) const {
  const std::uint32_t R = params().gpus_per_node;
  switch (kind_of(lp)) {
    case LpKind::kNic: {
      const std::uint32_t gpu = gpu_of(lp);
      if (port == 0) return {leaf_lp(leaf_of_gpu(gpu)), params().links[0]};
      return {nvswitch_lp(node_of(gpu)), params().nvlink};
    }
    case LpKind::kNvSwitch:
      return nvswitch_peer(lp, port);
    case LpKind::kLeaf: {
      const std::uint32_t leaf = lp - first_leaf_;
      const std::uint32_t group = leaf / R, rail = leaf % R;
      if (port < down_) return {nic_lp((group * down_ + port) * R + rail), params().links[0]};
      const std::uint32_t j = port - down_;
      if (params().tiers == 2) return {tier1_lp(j), params().links[1]};
      return {tier1_lp(leaf / pod_leaves_ * up_ + j), params().links[1]};
    }
    case LpKind::kTier1: {
      const std::uint32_t index = lp - first_tier1_;
      if (params().tiers == 2) return {leaf_lp(port), params().links[1]};
      const std::uint32_t pod = index / up_, j = index % up_;
      if (port < pod_leaves_) return {leaf_lp(pod * pod_leaves_ + port), params().links[1]};
      return {core_lp(j * agg_up_ + (port - pod_leaves_)), params().links[2]};
    }
    case LpKind::kCore: {
      const std::uint32_t index = lp - first_core_;
      const std::uint32_t j = index / agg_up_;
      return {tier1_lp(port * up_ + j), params().links[2]};
    }
    default:
      throw std::logic_error("fat tree: LP has no ports");
  }
}

bool FatTree::port_connected(LpId lp, std::uint32_t port) const {
  switch (kind_of(lp)) {
    case LpKind::kLeaf: {
      const std::uint32_t group = (lp - first_leaf_) / params().gpus_per_node;
      return port >= down_ || group * down_ + port < params().nodes;  // a node behind each down port
    }
    case LpKind::kTier1:
      if (params().tiers == 2) return port < leaves_;
      return port >= pod_leaves_ || ((lp - first_tier1_) / up_) * pod_leaves_ + port < leaves_;
    case LpKind::kCore:
      return port < pods_;
    default:
      return true;
  }
}

std::uint32_t FatTree::route(LpId lp, std::uint32_t src, std::uint32_t dst, std::uint64_t flow_hash) const {
  const std::uint32_t R = params().gpus_per_node;
  const std::uint32_t dst_leaf = leaf_of_gpu(dst);
  switch (kind_of(lp)) {
    case LpKind::kNic:
      return (R > 1 && node_of(src) == node_of(dst)) ? 1 : 0;
    case LpKind::kNvSwitch:
      return dst % R;
    case LpKind::kLeaf: {
      const std::uint32_t leaf = lp - first_leaf_;
      if (leaf == dst_leaf) return node_of(dst) - (leaf / R) * down_;
      return down_ + static_cast<std::uint32_t>(flow_hash % up_);
    }
    case LpKind::kTier1: {
      if (params().tiers == 2) return dst_leaf;
      const std::uint32_t pod = (lp - first_tier1_) / up_;
      if (dst_leaf / pod_leaves_ == pod) return dst_leaf % pod_leaves_;
      return pod_leaves_ + static_cast<std::uint32_t>(fibonacci_mix64(flow_hash) % agg_up_);
    }
    case LpKind::kCore:
      return dst_leaf / pod_leaves_;
    default:
      throw std::logic_error("fat tree: LP does not route");
  }
}

SimTime FatTree::min_latency() const {
  SimTime m = std::min(node_min_latency(), params().links[0].latency_ps);
  m = std::min(m, params().links[1].latency_ps);
  if (params().tiers == 3) m = std::min(m, params().links[2].latency_ps);
  return m;
}

}  // namespace warpsim::cluster
