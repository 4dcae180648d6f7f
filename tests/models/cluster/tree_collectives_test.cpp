// Tree and hierarchical all-reduce (models/cluster/tree_collectives.*): the double binary tree's shape
// (consistent parent/child links, at most two children, every rank reaches the root, inner ranks of one
// tree are leaves of the other), and simulated times against the analytic formulas in both fidelities:
// tree ~ 2 S/B + pipeline fill, hierarchical = 2(L-1)/L S/B_nvlink + 2(M-1)/M (S/L)/B_net + latencies,
// and the tree's latency advantage over the ring for small messages.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "engine/kernel/engine.hpp"
#include "models/cluster/cluster_model.hpp"
#include "models/cluster/collectives.hpp"
#include "models/cluster/tree_collectives.hpp"
#include "partition/block_map.hpp"
#include "tests/models/cluster/sequential_cluster_run.hpp"

namespace warpsim::cluster {
namespace {

TEST(DoubleBinaryTree, LinksAreConsistentAndComplementary) {
  for (std::uint32_t n = 2; n <= 70; ++n) {
    SCOPED_TRACE(n);
    for (std::uint32_t t = 0; t < 2; ++t) {
      std::uint32_t roots = 0;
      for (std::uint32_t p = 0; p < n; ++p) {
        EXPECT_EQ(tree_position(n, t, tree_rank(n, t, p)), p);
        const TreeLinks l = binary_tree_links(n, p);
        if (l.parent < 0) ++roots;
        for (const std::int64_t c : l.children) {
          if (c < 0) continue;
          ASSERT_LT(c, n);
          EXPECT_EQ(binary_tree_links(n, static_cast<std::uint32_t>(c)).parent, p);
        }
        // Walking up ends at the root within depth steps.
        std::uint32_t steps = 0;
        for (std::int64_t q = p; q > 0; q = binary_tree_links(n, static_cast<std::uint32_t>(q)).parent)
          ++steps;
        EXPECT_LE(steps, binary_tree_depth(n));
      }
      EXPECT_EQ(roots, 1u);
    }
    // Ranks with children in tree A have none in tree B (the root's position 0 in B excepted).
    std::uint32_t inner_in_both = 0;
    for (std::uint32_t r = 0; r < n; ++r) {
      const auto a = binary_tree_links(n, tree_position(n, 0, r));
      const auto b = binary_tree_links(n, tree_position(n, 1, r));
      if (a.children[0] >= 0 && b.children[0] >= 0) ++inner_in_both;
    }
    EXPECT_LE(inner_in_both, 1u);
  }
  EXPECT_EQ(binary_tree_depth(8), 3u);  // e.g. 0 - 4 - 6 - 7
}

TEST(TreeAllReduce, LargeMessagesApproachTwoSOverB) {
  // 16 single-GPU nodes on one radix-32 leaf: every tree edge is NIC -> leaf -> NIC.
  const std::uint64_t bytes = 64ull << 20, chunk = 1ull << 20;
  for (const Fidelity f : {Fidelity::kPacket, Fidelity::kFlow}) {
    SCOPED_TRACE(f == Fidelity::kFlow ? "flow" : "packet");
    const ClusterParams p = flat(16, 1, 32, 1.0, f);
    const Ran r = run(p, std::make_shared<CollectiveProgram>(Collective::kAllReduce, Algorithm::kTree,
                                                             GpuGroup{0, 16, 1}, bytes, chunk));
    ASSERT_TRUE(r.all_done);
    const double B = 400e9 / 8;
    // Each rank moves about S in and S out per phase (inner in one tree, leaf in the other), two phases;
    // stages are skewed two slots per tree level, so filling and draining the pipeline costs about
    // 2 x depth slots of one chunk per phase.
    const double depth = binary_tree_depth(16);
    const double analytic = 2.0 * bytes / B + 4 * depth * chunk / B;
    RecordProperty(f == Fidelity::kFlow ? "flow_us" : "packet_us", std::to_string(seconds(r.finish) * 1e6));
    RecordProperty("analytic_us", std::to_string(analytic * 1e6));
    EXPECT_GE(seconds(r.finish), 2.0 * bytes / B);
    EXPECT_NEAR(seconds(r.finish) / analytic, 1.0, 0.05) << seconds(r.finish) << " vs " << analytic;
  }
}

TEST(TreeAllReduce, SmallMessagesBeatTheRing) {
  // 1 KiB on 16 GPUs: the ring pays 2(n-1) = 30 step latencies, the tree about 2 x depth (+1 per tree).
  const ClusterParams p = flat(16, 1, 32, 1.0, Fidelity::kPacket);
  const GpuGroup all{0, 16, 1};
  const Ran ring =
      run(p, std::make_shared<CollectiveProgram>(Collective::kAllReduce, Algorithm::kRing, all, 1024));
  const Ran tree =
      run(p, std::make_shared<CollectiveProgram>(Collective::kAllReduce, Algorithm::kTree, all, 1024));
  ASSERT_TRUE(ring.all_done && tree.all_done);
  const double alpha = seconds(2 * p.injection_latency_ps + 2 * p.links[0].latency_ps + p.switch_latency_ps);
  EXPECT_NEAR(seconds(ring.finish) / (30 * alpha), 1.0, 0.1);
  EXPECT_LT(seconds(tree.finish), 0.5 * seconds(ring.finish));
  // A few hop latencies per tree level (the skewed stages), far fewer than the ring's 30 steps.
  EXPECT_LT(seconds(tree.finish), 4 * binary_tree_depth(16) * alpha * 1.1);
}

TEST(ChainedTree, OneTreePerChannelWithChainsInNodesAndRailAlignedEdgesBetweenThem) {
  for (std::uint32_t nodes = 1; nodes <= 9; ++nodes) {
    for (std::uint32_t L = 1; L <= 4; ++L) {
      const std::uint32_t n = nodes * L;
      if (n < 2) continue;
      SCOPED_TRACE(std::to_string(nodes) + " nodes x " + std::to_string(L));
      for (std::uint32_t t = 0; t < 2 * L; ++t) {
        std::uint32_t roots = 0;
        for (std::uint32_t r = 0; r < n; ++r) {
          const ChainTreeLinks l = chain_tree_links(n, L, t, r);
          if (l.parent < 0) {
            ++roots;
            EXPECT_EQ(l.depth, 0u);
            // The root is the channel's chain head on the root node.
            EXPECT_EQ(r % L, t / 2);
          } else {
            EXPECT_EQ(chain_tree_links(n, L, t, static_cast<std::uint32_t>(l.parent)).depth + 1, l.depth);
            // Between nodes only the channel's rail: local index t / 2 at both ends.
            if (l.parent / L != r / L) {
              EXPECT_EQ(r % L, t / 2);
              EXPECT_EQ(static_cast<std::uint32_t>(l.parent) % L, t / 2);
            }
          }
          for (const std::int64_t c : l.children) {
            if (c < 0) continue;
            ASSERT_LT(c, n);
            EXPECT_EQ(chain_tree_links(n, L, t, static_cast<std::uint32_t>(c)).parent, r);
          }
          EXPECT_LE(l.depth, binary_tree_depth(nodes) + L - 1);
          if (L == 1) {  // the flat double binary tree
            const TreeLinks flat = binary_tree_links(n, tree_position(n, t, r));
            const std::int64_t parent =
                flat.parent < 0 ? -1 : std::int64_t{tree_rank(n, t, static_cast<std::uint32_t>(flat.parent))};
            EXPECT_EQ(l.parent, parent);
          }
        }
        EXPECT_EQ(roots, 1u);
      }
    }
  }
}

TEST(ChainedTree, EverySendIsReceivedAndEveryRailCarriesItsShare) {
  for (const auto& [nodes, L] : {std::pair{4u, 4u}, {5u, 2u}, {8u, 8u}, {1u, 4u}, {7u, 1u}}) {
    const std::uint32_t n = nodes * L;
    SCOPED_TRACE(std::to_string(nodes) + " nodes x " + std::to_string(L));
    const std::uint64_t bytes = (10ull << 20) + 7, chunk = 512ull << 10;
    const TreeAllReduce tree(n, bytes, chunk, L);
    EXPECT_EQ(tree.trees(), 2 * L);
    std::multiset<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint64_t>> sends, receives;
    std::vector<std::uint64_t> rail_bytes(L, 0);
    std::uint64_t sent = 0;
    for (std::uint32_t r = 0; r < n; ++r) {
      for (std::uint64_t i = 0;; ++i) {
        const auto op = tree.op(r, i);
        if (!op) break;
        if (op->kind == OpKind::kSend) {
          sends.insert({r, op->peer, op->tag, op->bytes});
          sent += op->bytes;
          if (op->peer / L != r / L) rail_bytes[r % L] += op->bytes;
        } else if (op->kind == OpKind::kRecv) {
          receives.insert({op->peer, r, op->tag, op->bytes});
        }
      }
    }
    EXPECT_EQ(sends, receives);
    EXPECT_EQ(sent, 2ull * (n - 1) * bytes);  // the ring's bytes
    if (nodes > 1) {
      const auto [lo, hi] = std::minmax_element(rail_bytes.begin(), rail_bytes.end());
      EXPECT_GT(*lo, 0u);
      EXPECT_LE(static_cast<double>(*hi), 1.001 * static_cast<double>(*lo));
    }
  }
  EXPECT_THROW(TreeAllReduce(10, 100, 10, 4), std::invalid_argument);
}

TEST(ChainedTree, LargeMessagesApproachTwoSOverTheNodesNics) {
  // 4 nodes x 4 GPUs, one 400 Gb/s NIC per GPU: NCCL's tree moves 2 S per node over all four NICs, the
  // chain's NVLink hops (3600 Gb/s) stay off the critical path.
  const std::uint64_t bytes = 64ull << 20, chunk = 512ull << 10;
  const std::uint32_t L = 4;
  for (const Fidelity f : {Fidelity::kPacket, Fidelity::kFlow}) {
    SCOPED_TRACE(f == Fidelity::kFlow ? "flow" : "packet");
    const ClusterParams p = flat(4, L, 16, 1.0, f);
    const Ran r = run(p, std::make_shared<CollectiveProgram>(Collective::kAllReduce, Algorithm::kTree,
                                                             GpuGroup{0, 16, 1}, bytes, chunk, L));
    ASSERT_TRUE(r.all_done);
    const double B = 400e9 / 8;
    const double analytic = 2.0 * bytes / (L * B);
    RecordProperty(f == Fidelity::kFlow ? "flow_us" : "packet_us", std::to_string(seconds(r.finish) * 1e6));
    RecordProperty("analytic_us", std::to_string(analytic * 1e6));
    EXPECT_GE(seconds(r.finish), analytic);
    EXPECT_LT(seconds(r.finish), 1.25 * analytic) << seconds(r.finish) << " vs " << analytic;
  }
}

TEST(HierarchicalAllReduce, MatchesTheTwoLevelFormula) {
  // 4 nodes x 4 GPUs, radix 8: the four nodes share each rail's leaf, so the per-rail rings stay there.
  const std::uint64_t bytes = 64ull << 20;
  for (const Fidelity f : {Fidelity::kPacket, Fidelity::kFlow}) {
    SCOPED_TRACE(f == Fidelity::kFlow ? "flow" : "packet");
    const ClusterParams p = flat(4, 4, 8, 1.0, f);
    const Ran r = run(p, std::make_shared<CollectiveProgram>(Collective::kAllReduce, Algorithm::kHierarchical,
                                                             GpuGroup{0, 16, 1}, bytes, 1 << 20, 4));
    ASSERT_TRUE(r.all_done);
    const double L = 4, M = 4, B_nv = p.nvlink.bandwidth_gbps * 1e9 / 8, B = 400e9 / 8;
    const double a_nv = seconds(2 * p.injection_latency_ps + 2 * p.nvlink.latency_ps + p.switch_latency_ps);
    const double a_net =
        seconds(2 * p.injection_latency_ps + 2 * p.links[0].latency_ps + p.switch_latency_ps);
    const double analytic = 2 * (L - 1) / L * bytes / B_nv + 2 * (M - 1) / M * (bytes / L) / B +
                            2 * (L - 1) * a_nv + 2 * (M - 1) * a_net;
    RecordProperty(f == Fidelity::kFlow ? "flow_us" : "packet_us", std::to_string(seconds(r.finish) * 1e6));
    RecordProperty("analytic_us", std::to_string(analytic * 1e6));
    EXPECT_NEAR(seconds(r.finish) / analytic, 1.0, 0.05) << seconds(r.finish) << " vs " << analytic;
  }
  // Versus the flat ring on the same 16 GPUs (its cross-node steps run at network speed for S/16 each):
  const ClusterParams p = flat(4, 4, 8, 1.0, Fidelity::kPacket);
  const Ran ring = run(p, std::make_shared<CollectiveProgram>(Collective::kAllReduce, Algorithm::kRing,
                                                              GpuGroup{0, 16, 1}, bytes));
  const Ran hier =
      run(p, std::make_shared<CollectiveProgram>(Collective::kAllReduce, Algorithm::kHierarchical,
                                                 GpuGroup{0, 16, 1}, bytes, 1 << 20, 4));
  EXPECT_LT(hier.finish, ring.finish);
}

}  // namespace
}  // namespace warpsim::cluster
