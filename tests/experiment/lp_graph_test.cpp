// The training LP graph: a valid description at every granularity, coarsening conserves the expected work
// and message weight, edges join only LPs that exchange events in the model (physical links, GPU-NIC,
// GPU-storage), and the weights follow the workload (tensor traffic dominates in the default experiment).
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "models/cluster/fat_tree.hpp"
#include "tests/partition/test_graphs.hpp"

namespace warpsim::partition {
namespace {

using training::Granularity;

TEST(LpGraph, CoarseningConservesWeights) {
  for (const char* spec : {"tests/models/training/small.textproto", "examples/default.textproto",
                           "examples/llama405b-16kxh100.textproto"}) {
    const auto e = test::load(spec);
    const PartitionGraph lp = test::graph(e, Granularity::kLp);
    for (Granularity g : {Granularity::kNode, Granularity::kGroup}) {
      const PartitionGraph c = test::graph(e, g);
      EXPECT_LT(c.vertex_count(), lp.vertex_count());
      EXPECT_NEAR(c.total_weight(), lp.total_weight(), 1e-9 * lp.total_weight()) << spec;
      EXPECT_NEAR(c.total_message_weight(), lp.total_message_weight(), 1e-9 * lp.total_message_weight())
          << spec;
    }
    const PartitionGraph no_edges = test::graph(e, Granularity::kNode, false);
    EXPECT_FALSE(no_edges.has_edges());
    EXPECT_NEAR(no_edges.total_weight(), lp.total_weight(), 1e-9 * lp.total_weight());
  }
}

TEST(LpGraph, EdgesAreLinksOfTheModel) {
  for (const char* spec : {"tests/models/training/small.textproto", "examples/llama405b-16kxh100.textproto"}) {
    const auto e = test::load(spec);
    const cluster::FatTree topo(e.params);
    std::set<std::pair<LpId, LpId>> links;
    auto link = [&](LpId a, LpId b) { links.insert({std::min(a, b), std::max(a, b)}); };
    for (LpId id = 0; id < topo.lp_count(); ++id) {
      const auto kind = topo.kind_of(id);
      if (kind == cluster::LpKind::kGpu) {
        link(id, topo.nic_lp(topo.gpu_of(id)));
        for (std::uint32_t t = 0; t < e.params.storage_targets; ++t) link(id, topo.storage_lp(t));
      } else if (kind != cluster::LpKind::kStorage) {
        for (std::uint32_t p = 0; p < topo.port_count(id); ++p) link(id, topo.peer(id, p).lp);
      }
    }
    const PartitionGraph g = test::graph(e, Granularity::kLp);
    ASSERT_EQ(g.vertex_count(), topo.lp_count());
    std::uint64_t edges = 0;
    for (std::uint32_t v = 0; v < g.vertex_count(); ++v) {
      const LpId a = g.ranges[g.range_begin[v]].first;
      for (std::uint64_t i = g.edge_begin[v]; i < g.edge_begin[v + 1]; ++i) {
        const LpId b = g.ranges[g.range_begin[g.edge_to[i]]].first;
        ASSERT_TRUE(links.count({std::min(a, b), std::max(a, b)})) << spec << ": edge " << a << " - " << b;
        ++edges;
      }
    }
    EXPECT_GT(edges, 0u);
  }
}

TEST(LpGraph, WeightsFollowTheWorkload) {
  const auto e = test::load("examples/default.textproto");  // TP=8 in a node, PP=4, DP=32
  training::TrafficSummary t;
  training::build_lp_graph(e.params, e.job, e.params.storage_targets, Granularity::kNode, false, &t);
  EXPECT_GT(t.tensor, t.pipeline);
  EXPECT_GT(t.data, 0);
  EXPECT_GT(t.compute, 0);
  // A node's vertex holds its TP group: the heaviest edges of the LP graph are inside nodes, so at node
  // granularity most message weight is internal.
  const PartitionGraph node = test::graph(e, Granularity::kNode);
  EXPECT_GT(node.internal_weight, 0.5 * node.total_message_weight());
}

}  // namespace
}  // namespace warpsim::partition
