// Arithmetic torus: every GPU pair has a dimension-ordered route of the shortest length that ends at the
// destination NIC, ports and peers agree (a router's +1 link comes back by the neighbour's -1 link), the LP
// id layout is dense, half-way ties use both directions, and bad torus specs name their field.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "experiment/spec/cluster_spec.hpp"
#include "models/cluster/cluster_events.hpp"
#include "models/cluster/torus.hpp"

namespace warpsim::cluster {
namespace {

ClusterParams example(const char* file) {
  return spec::to_cluster_params(spec::load_cluster_spec(std::string(WARPSIM_EXAMPLES_DIR "/") + file));
}

ClusterParams torus(std::uint32_t gpus_per_node, std::array<std::uint32_t, 3> dims) {
  ClusterParams p;
  p.topology = TopologyKind::kTorus;
  p.gpus_per_node = gpus_per_node;
  p.torus_dims = dims;
  p.nodes = 1;
  for (const auto k : dims) p.nodes *= k == 0 ? 1 : k;
  return p;
}

// Routers crossed from src's NIC to dst's NIC (-1 if the route loops or leaves the torus); records the
// first router-to-router port used.
int walk(const Torus& t, std::uint32_t src, std::uint32_t dst, std::uint32_t tag, std::uint32_t* first_port) {
  const std::uint64_t h = flow_hash(src, dst, tag);
  LpId at = t.nic_lp(src);
  int routers = 0;
  for (int hop = 0; hop < 64; ++hop) {
    const std::uint32_t port = t.route(at, src, dst, h);
    if (port >= t.port_count(at)) return -1;
    if (t.kind_of(at) == LpKind::kRouter && port >= t.params().gpus_per_node && first_port &&
        *first_port == ~0u) {
      *first_port = port;
    }
    const PortPeer peer = t.peer(at, port);
    if (peer.lp >= t.lp_count() || !(peer.link.bandwidth_gbps > 0)) return -1;
    if (peer.lp == t.nic_lp(dst)) return routers;
    const LpKind k = t.kind_of(peer.lp);
    if (k != LpKind::kRouter && k != LpKind::kNvSwitch) return -1;
    if (k == LpKind::kRouter) ++routers;
    at = peer.lp;
  }
  return -1;
}

void check_all_pairs(const ClusterParams& p) {
  const Torus t(p);
  for (std::uint32_t s = 0; s < t.gpus(); ++s) {
    for (std::uint32_t d = 0; d < t.gpus(); ++d) {
      if (s == d) continue;
      for (std::uint32_t tag = 0; tag < 4; ++tag) {
        const int n = walk(t, s, d, tag, nullptr);
        ASSERT_GE(n, 0) << "no route " << s << " -> " << d;
        if (t.node_of(s) == t.node_of(d)) {
          EXPECT_EQ(n, p.gpus_per_node > 1 ? 0 : 1) << "same node goes over the NVSwitch";
        } else {
          // Source router, then one router per hop.
          EXPECT_EQ(n, static_cast<int>(t.hops(t.node_of(s), t.node_of(d))) + 1) << s << " -> " << d;
        }
      }
    }
  }
}

TEST(Torus, RoutesAreShortestInOneTwoAndThreeDimensions) {
  check_all_pairs(torus(2, {6, 0, 0}));
  check_all_pairs(torus(1, {4, 3, 0}));
  check_all_pairs(torus(2, {2, 3, 4}));
  check_all_pairs(example("torus_2d_16gpu.textproto"));
}

TEST(Torus, LinksArePairedBothWays) {
  const Torus t(torus(2, {4, 3, 2}));
  const std::uint32_t R = 2;
  for (std::uint32_t node = 0; node < t.params().nodes; ++node) {
    const LpId router = t.router_lp(node);
    ASSERT_EQ(t.kind_of(router), LpKind::kRouter);
    ASSERT_EQ(t.port_count(router), R + 2 * 3);
    for (std::uint32_t r = 0; r < R; ++r) {
      EXPECT_EQ(t.peer(router, r).lp, t.nic_lp(node * R + r));
      EXPECT_EQ(t.peer(t.nic_lp(node * R + r), 0).lp, router);
    }
    for (std::uint32_t i = 0; i < 3; ++i) {
      const LpId plus = t.peer(router, R + 2 * i).lp;
      EXPECT_EQ(t.peer(plus, R + 2 * i + 1).lp, router) << "node " << node << " dim " << i;
      EXPECT_EQ(t.hops(node, plus - t.router_lp(0)), 1u);
    }
  }
}

TEST(Torus, LayoutIsDense) {
  const Torus t(example("torus_2d_16gpu.textproto"));
  std::set<LpId> seen;
  for (std::uint32_t g = 0; g < t.gpus(); ++g) {
    EXPECT_EQ(t.kind_of(t.gpu_lp(g)), LpKind::kGpu);
    EXPECT_EQ(t.kind_of(t.nic_lp(g)), LpKind::kNic);
    EXPECT_EQ(t.gpu_of(t.gpu_lp(g)), g);
    seen.insert(t.gpu_lp(g));
    seen.insert(t.nic_lp(g));
  }
  for (std::uint32_t n = 0; n < t.params().nodes; ++n) {
    seen.insert(t.nvswitch_lp(n));
    seen.insert(t.router_lp(n));
    EXPECT_EQ(t.switch_place(t.router_lp(n)).tier, 1);
    EXPECT_EQ(t.switch_place(t.router_lp(n)).index, n);
    EXPECT_EQ(t.edge_switch_of(n * 2), n);
  }
  EXPECT_EQ(seen.size(), t.lp_count());
  EXPECT_EQ(*seen.rbegin() + 1, t.lp_count());
}

TEST(Torus, HalfWayTiesGoBothWays) {
  // Ring of 4 nodes: node 0 -> node 2 is two hops either way; the flow hash picks, so both ways are used.
  const Torus t(torus(1, {4, 0, 0}));
  std::set<std::uint32_t> first_ports;
  for (std::uint32_t tag = 0; tag < 64; ++tag) {
    std::uint32_t port = ~0u;
    ASSERT_EQ(walk(t, 0, 2, tag, &port), 3);
    first_ports.insert(port);
  }
  EXPECT_EQ(first_ports.size(), 2u);
}

std::string error_of(const std::string& text) {
  try {
    spec::validated(spec::parse_cluster_spec(text, "test"));
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Torus, BadSpecsNameTheField) {
  const std::string head =
      "nodes: 8 scale_up { gpus_per_node: 2 nvlink_bandwidth_gbps: 3600 nvlink_latency_ns: 200 } "
      "topology: \"torus\" ";
  const std::string links =
      " links { bandwidth_gbps: 400 latency_ns: 500 } links { bandwidth_gbps: 400 latency_ns: 500 }";
  EXPECT_EQ(error_of(head + "torus { dims: [4, 2]" + links + " }"), "");
  EXPECT_NE(error_of(head + "torus { dims: [4, 4]" + links + " }")
                .find("torus.dims: product 16 must equal nodes (8)"),
            std::string::npos);
  EXPECT_NE(error_of(head + "torus { dims: [8, 1]" + links + " }").find("torus.dims[1]: must be >= 2"),
            std::string::npos);
  EXPECT_NE(error_of(head + "torus { links" + links.substr(6) + " }").find("torus.dims: needs 1 to 3"),
            std::string::npos);
  EXPECT_NE(error_of(head + "torus { dims: [4, 2] links { bandwidth_gbps: 400 latency_ns: 500 } }")
                .find("torus.links: needs 2 entries"),
            std::string::npos);
  EXPECT_NE(error_of(head + "torus { dims: [4, 2] links { bandwidth_gbps: 0 latency_ns: 500 } "
                            "links { bandwidth_gbps: 400 latency_ns: 500 } }")
                .find("torus.links[0].bandwidth_gbps: must be > 0"),
            std::string::npos);
  // Flow fidelity keeps paths of at most kMaxFlowPathLinks links.
  const std::string ring =
      "nodes: 64 scale_up { gpus_per_node: 1 } topology: \"torus\" network { fidelity: \"flow\" } ";
  EXPECT_NE(
      error_of(ring + "torus { dims: [64]" + links + " }").find("torus.dims: flow fidelity supports paths"),
      std::string::npos);
  EXPECT_EQ(error_of(ring + "torus { dims: [4, 4, 4]" + links + " }"), "");
}

}  // namespace
}  // namespace warpsim::cluster
