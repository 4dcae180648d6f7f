// Arithmetic torus (1 to 3 dimensions, wrap-around links) of per-node routers: the second topology family
// (e.g. TPU-pod or Cray-style direct networks), next to the fat-tree. Each node keeps its NVSwitch scale-up
// domain; all its NICs attach to the node's router, which links to its two neighbours in every dimension.
//
// LP ids: the node blocks of topology.hpp, then one router per node (router n serves node n), then the
// storage targets. Node n sits at coordinates (n mod k0, n / k0 mod k1, n / (k0 k1)).
// Router ports: [0, R) down to the node's NIC r; then R + 2i (+1 step in dimension i) and R + 2i + 1 (-1).
// Routing is dimension-ordered (lowest dimension first) along the shorter way round; when both ways are
// equally long (k even, half-way across) the packet's flow hash picks one, which spreads flows like ECMP
// while keeping every route deterministic. Links: links[0] NIC <-> router, links[1] router <-> router.
#pragma once

#include <array>
#include <cstdint>

#include "models/cluster/topology.hpp"

namespace warpsim::cluster {

class Torus final : public Topology {
 public:
  explicit Torus(const ClusterParams& params);

  std::uint32_t port_count(LpId lp) const override;
  PortPeer peer(LpId lp, std::uint32_t port) const override;
  std::uint32_t route(LpId lp, std::uint32_t src, std::uint32_t dst, std::uint64_t flow_hash) const override;
  SimTime min_latency() const override;
  std::uint32_t edge_switch_of(std::uint32_t gpu) const override { return node_of(gpu); }

  LpId router_lp(std::uint32_t node) const { return first_switch_lp() + node; }
  std::uint32_t dimensions() const { return dims_; }
  // Coordinate of `node` in dimension `i`, and the node one step (+1 or -1) away along it.
  std::uint32_t coordinate(std::uint32_t node, std::uint32_t i) const { return node / stride_[i] % size_[i]; }
  std::uint32_t neighbour(std::uint32_t node, std::uint32_t i, bool plus) const;
  // Router hops between two nodes along the shortest dimension-ordered path.
  std::uint32_t hops(std::uint32_t from_node, std::uint32_t to_node) const;

 private:
  LpKind switch_kind(LpId) const override { return LpKind::kRouter; }
  SwitchPlace family_switch_place(LpId lp) const override { return {1, lp - first_switch_lp()}; }

  std::uint32_t dims_ = 0;
  std::array<std::uint32_t, 3> size_{1, 1, 1};
  std::array<std::uint32_t, 3> stride_{1, 1, 1};
};

}  // namespace warpsim::cluster
