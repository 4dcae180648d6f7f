// Arithmetic torus of per-node routers (see torus.hpp).
#include "models/cluster/torus.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace warpsim::cluster {

Torus::Torus(const ClusterParams& p) : Topology(p) {
  std::uint64_t product = 1;
  for (const std::uint32_t k : p.torus_dims) {
    if (k == 0) break;
    if (k < 2) throw std::invalid_argument("torus.dims: every dimension needs at least 2 nodes");
    if (dims_ > 0) stride_[dims_] = stride_[dims_ - 1] * size_[dims_ - 1];
    size_[dims_++] = k;
    product *= k;
  }
  if (dims_ == 0) throw std::invalid_argument("torus.dims: at least one dimension is required");
  if (product != p.nodes)
    throw std::invalid_argument("torus.dims: product " + std::to_string(product) + " != nodes " +
                                std::to_string(p.nodes));
  set_switch_count(p.nodes);
}

std::uint32_t Torus::neighbour(std::uint32_t node, std::uint32_t i, bool plus) const {
  const std::uint32_t c = coordinate(node, i);
  const std::uint32_t next = plus ? (c + 1) % size_[i] : (c + size_[i] - 1) % size_[i];
  return node - c * stride_[i] + next * stride_[i];
}

std::uint32_t Torus::hops(std::uint32_t from_node, std::uint32_t to_node) const {
  std::uint32_t total = 0;
  for (std::uint32_t i = 0; i < dims_; ++i) {
    const std::uint32_t ahead = (coordinate(to_node, i) + size_[i] - coordinate(from_node, i)) % size_[i];
    total += std::min(ahead, size_[i] - ahead);
  }
  return total;
}

std::uint32_t Torus::port_count(LpId lp) const {
  const std::uint32_t R = params().gpus_per_node;
  switch (kind_of(lp)) {
    case LpKind::kNic:
      return R > 1 ? 2 : 1;  // 0: scale-out (router), 1: NVLink (NVSwitch)
    case LpKind::kNvSwitch:
      return R;
    case LpKind::kRouter:
      return R + 2 * dims_;
    default:
      return 0;
  }
}

PortPeer Torus::peer(LpId lp, std::uint32_t port) const {
  const std::uint32_t R = params().gpus_per_node;
  switch (kind_of(lp)) {
    case LpKind::kNic: {
      const std::uint32_t gpu = gpu_of(lp);
      if (port == 0) return {router_lp(node_of(gpu)), params().links[0]};
      return {nvswitch_lp(node_of(gpu)), params().nvlink};
    }
    case LpKind::kNvSwitch:
      return nvswitch_peer(lp, port);
    case LpKind::kRouter: {
      const std::uint32_t node = lp - first_switch_lp();
      if (port < R) return {nic_lp(node * R + port), params().links[0]};
      const std::uint32_t i = (port - R) / 2;
      return {router_lp(neighbour(node, i, (port - R) % 2 == 0)), params().links[1]};
    }
    default:
      throw std::logic_error("torus: LP has no ports");
  }
}

std::uint32_t Torus::route(LpId lp, std::uint32_t src, std::uint32_t dst, std::uint64_t flow_hash) const {
  const std::uint32_t R = params().gpus_per_node;
  switch (kind_of(lp)) {
    case LpKind::kNic:
      return (R > 1 && node_of(src) == node_of(dst)) ? 1 : 0;
    case LpKind::kNvSwitch:
      return dst % R;
    case LpKind::kRouter: {
      const std::uint32_t here = lp - first_switch_lp(), there = node_of(dst);
      if (here == there) return dst % R;
      for (std::uint32_t i = 0; i < dims_; ++i) {
        const std::uint32_t k = size_[i];
        const std::uint32_t ahead = (coordinate(there, i) + k - coordinate(here, i)) % k;
        if (ahead == 0) continue;
        bool plus = 2 * ahead < k;
        // Half-way round (k even): both ways are shortest; the flow hash picks, once (after one step
        // the remaining way is strictly shorter).
        if (2 * ahead == k) plus = ((flow_hash >> i) & 1) == 0;
        return R + 2 * i + (plus ? 0 : 1);
      }
      throw std::logic_error("torus: no dimension differs");
    }
    default:
      throw std::logic_error("torus: LP does not route");
  }
}

SimTime Torus::min_latency() const {
  return std::min({node_min_latency(), params().links[0].latency_ps, params().links[1].latency_ps});
}

}  // namespace warpsim::cluster
