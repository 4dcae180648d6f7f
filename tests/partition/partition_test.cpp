// Strategies on real LP graphs: every LP on exactly one rank, weight balanced within kBalanceTolerance for
// the graph strategies, and the cut ordering the strategies exist for (topology and METIS cut less message
// weight than block, which cuts less than round-robin). Bad rank counts are rejected.
#include <gtest/gtest.h>

#include <algorithm>

#include <set>
#include <string>
#include <vector>

#include "partition/partitioner.hpp"
#include "partition/quality.hpp"
#include "test_graphs.hpp"

namespace warpsim::partition {
namespace {

void expect_exact_cover(const LpMap& map, std::uint64_t lps) {
  std::vector<int> owner(lps, -1);
  for (int r = 0; r < map.rank_count(); ++r) {
    for (LpId lp : map.lps_of(r)) {
      ASSERT_LT(lp, lps);
      ASSERT_EQ(owner[lp], -1) << "LP " << lp << " mapped twice";
      owner[lp] = r;
      ASSERT_EQ(map.rank_of(lp), r) << "LP " << lp;
    }
  }
  for (std::uint64_t lp = 0; lp < lps; ++lp) ASSERT_NE(owner[lp], -1) << "LP " << lp << " unmapped";
}

TEST(Partitioners, EveryLpExactlyOnce) {
  for (const char* spec : {"tests/models/training/small.textproto", "examples/default.textproto"}) {
    const auto e = test::load(spec);
    const PartitionGraph g = test::graph(e, training::Granularity::kNode);
    for (const auto& name : partitioner_names()) {
      for (int ranks : {1, 2, 3, 4, 7}) {
        SCOPED_TRACE(std::string(spec) + " " + name + " ranks " + std::to_string(ranks));
        const auto map = make_partitioner(name)->partition(g, ranks);
        ASSERT_EQ(map->rank_count(), ranks);
        expect_exact_cover(*map, g.lp_count);
      }
    }
  }
}

TEST(Partitioners, GraphStrategiesBalanceWithinTolerance) {
  const auto e = test::load("examples/default.textproto");  // 1024 GPUs, 2256 LPs
  const PartitionGraph node = test::graph(e, training::Granularity::kNode);
  const PartitionGraph lp = test::graph(e, training::Granularity::kLp);
  // The strategies' bound (partitioner.hpp) holds as long as no single vertex is heavier than the tolerance
  // allows. Where a node outweighs it (8 ranks: 128 nodes, each about 1/16 of a rank's share since the
  // training program sends NCCL's LL wire bytes and charges its latency), a rank's chunk has two cuts, each
  // of which can land one node off: that is the bound (before issue #22's NCCL cost the topology strategy
  // reached 1.048 at 8 ranks, now 1.064).
  const double heaviest = *std::max_element(node.weight.begin(), node.weight.end());
  for (const char* name : {"topology", "topology-striped", "metis"}) {
    for (int ranks : {2, 4, 8}) {
      const PartitionQuality q = evaluate(lp, *make_partitioner(name)->partition(node, ranks));
      const double bound = 1 + std::max(kBalanceTolerance, 2 * heaviest / (node.total_weight() / ranks));
      EXPECT_LE(q.imbalance, bound) << name << " ranks " << ranks;
      EXPECT_EQ(q.split_vertices, 0u);
    }
  }
}

TEST(Partitioners, TopologyAndMetisCutLessThanBlockAndRoundRobin) {
  const auto e = test::load("examples/default.textproto");
  const PartitionGraph node = test::graph(e, training::Granularity::kNode);
  const PartitionGraph lp = test::graph(e, training::Granularity::kLp);
  for (int ranks : {2, 4}) {
    auto cut = [&](const char* name) {
      return evaluate(lp, *make_partitioner(name)->partition(node, ranks)).edge_cut;
    };
    const double block = cut("block"), rr = cut("round-robin");
    EXPECT_LT(block, rr);
    EXPECT_LT(cut("topology"), block) << ranks;
    EXPECT_LT(cut("topology-striped"), block) << ranks;
    EXPECT_LT(cut("metis"), block) << ranks;
  }
}

TEST(Partitioners, TopologyNeedsNoEdgesAndKeepsNodesWhole) {
  const auto e = test::load("examples/default.textproto");
  const PartitionGraph vertices = test::graph(e, training::Granularity::kNode, /*edges=*/false);
  ASSERT_FALSE(vertices.has_edges());
  const auto map = make_partitioner("topology")->partition(vertices, 4);
  const PartitionQuality q = evaluate(test::graph(e, training::Granularity::kNode), *map);
  EXPECT_EQ(q.split_vertices, 0u);  // no node (GPUs + NICs + NVSwitch) is split across ranks
}

TEST(Partitioners, TopologyKeepsPodsWholeAndStripedSharesThem) {
  // 3 tiers: 16 pods of 128 nodes. Pods weigh the same only when every node does: with the data-parallel
  // rings. NCCL's choice (the default "auto") runs this example's 1 GB all-reduces as trees, whose roots
  // and inner members carry more ops, so the pods differ by more than the cut's slack and the topology
  // strategy rightly cuts inside a pod; this test is about the equal-pod case.
  auto params = spec::to_job_params(
      spec::load_experiment_spec(std::string(WARPSIM_SOURCE_DIR) + "/examples/partition-16kxh100.textproto")
          .job());
  params.training.dp_allreduce_algorithm = "ring";
  test::Experiment e = test::load("examples/partition-16kxh100.textproto");
  e.job = std::make_shared<const workload::Job>(params);
  const PartitionGraph node = test::graph(e, training::Granularity::kNode);
  const PartitionGraph lp = test::graph(e, training::Granularity::kLp);
  for (const char* name : {"topology", "topology-striped"}) {
    const auto map = make_partitioner(name)->partition(node, 4);
    const PartitionQuality q = evaluate(lp, *map);
    EXPECT_LE(q.imbalance, 1 + kBalanceTolerance) << name;
    EXPECT_EQ(q.split_vertices, 0u) << name;
    // Ranks holding each pod's nodes (the pod coordinate of node vertices).
    std::vector<std::set<int>> pod_ranks(16);
    for (std::uint32_t v = 0; v < node.vertex_count(); ++v) {
      if (node.coord(v, 0) == kShared) continue;
      pod_ranks.at(node.coord(v, 0)).insert(map->rank_of(node.ranges[node.range_begin[v]].first));
    }
    for (const auto& ranks : pod_ranks)
      EXPECT_EQ(ranks.size(), std::string(name) == "topology" ? 1u : 4u) << name;
  }
}

TEST(Partitioners, RackGranularityForLargeClusters) {
  const auto e = test::load("examples/default.textproto");
  const PartitionGraph group = test::graph(e, training::Granularity::kGroup);
  const PartitionGraph node = test::graph(e, training::Granularity::kNode);
  EXPECT_LT(group.vertex_count(), node.vertex_count());
  for (const char* name : {"topology", "metis"})
    expect_exact_cover(*make_partitioner(name)->partition(group, 2), group.lp_count);
}

TEST(Partitioners, RejectBadRankCounts) {
  const auto e = test::load("tests/models/training/small.textproto");
  const PartitionGraph g = test::graph(e, training::Granularity::kNode);
  for (const auto& name : partitioner_names()) {
    EXPECT_THROW(make_partitioner(name)->partition(g, 0), std::invalid_argument) << name;
    EXPECT_THROW(make_partitioner(name)->partition(g, static_cast<int>(g.lp_count) + 1),
                 std::invalid_argument)
        << name;
  }
  EXPECT_EQ(make_partitioner("no-such-strategy"), nullptr);
}

}  // namespace
}  // namespace warpsim::partition
