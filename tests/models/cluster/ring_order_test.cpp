// Rail-aligned rings (models/cluster/ring_order.*): every channel visits every rank once, every inter-node
// hop joins equal local indices (one rail) except the wrap-around of an odd node count, the channels leave
// each node by different GPUs (one NIC each), and a ring all-reduce over rails at flow fidelity meets
// 2(n-1)/n x S / (channels x B) plus the per-step latency.
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <vector>

#include "models/cluster/collectives.hpp"
#include "models/cluster/ring_order.hpp"
#include "tests/models/cluster/sequential_cluster_run.hpp"

namespace warpsim::cluster {
namespace {

TEST(RailRings, ChannelsArePermutationsWithOnRailNodeHops) {
  for (const auto& [n, L] : std::vector<std::pair<std::uint32_t, std::uint32_t>>{
           {16, 4}, {12, 4}, {64, 8}, {24, 8}, {6, 2}, {8, 8}, {8, 1}}) {
    const RailRings rings(n, L);
    const std::uint32_t M = n / L;
    const std::uint32_t expected_channels = (M > 1 && L > 1) ? L : 1;
    ASSERT_EQ(rings.channels(), expected_channels) << n << "/" << L;
    for (std::uint32_t node = 0; node < M; ++node) {
      std::set<std::uint32_t> exits;
      for (std::uint32_t c = 0; c < rings.channels(); ++c) {
        for (std::uint32_t r = node * L; r < (node + 1) * L; ++r)
          if (rings.right(c, r) / L != node) exits.insert(r);
      }
      if (M > 1) {
        EXPECT_EQ(exits.size(), rings.channels()) << "one exit GPU (NIC) per channel, node " << node;
      }
    }
    for (std::uint32_t c = 0; c < rings.channels(); ++c) {
      std::set<std::uint32_t> seen;
      for (std::uint32_t pos = 0; pos < n; ++pos) {
        const std::uint32_t r = rings.rank_at(c, pos);
        ASSERT_LT(r, n);
        EXPECT_EQ(rings.position_of(c, r), pos);
        seen.insert(r);
        const std::uint32_t next = rings.right(c, r);
        EXPECT_EQ(rings.left(c, next), r);
        const bool wrap = pos == n - 1;
        if (next / L != r / L && L > 1 && M > 1 && !(wrap && M % 2 == 1)) {
          EXPECT_EQ(next % L, r % L) << "channel " << c << " leaves rank " << r << " off its rail";
        }
        if (next / L != r / L) {
          EXPECT_EQ(next / L, (r / L + 1) % M) << "nodes in order";
        }
      }
      EXPECT_EQ(seen.size(), n) << "channel " << c;
    }
  }
  // One node or one rank per node: the flat ring.
  const RailRings flat_ring(8, 8);
  for (std::uint32_t r = 0; r < 8; ++r) EXPECT_EQ(flat_ring.right(0, r), (r + 1) % 8);
}

TEST(RailRings, RejectsALocalSizeThatDoesNotDivide) {
  EXPECT_THROW(RailRings(12, 8), std::invalid_argument);
}

// 4 nodes x 4 GPUs, radix 8: the four rails each have a leaf, every channel's node hops stay on it, so
// each NIC carries one channel's 2(n-1)/n x S/4 and the all-reduce runs at 4 NICs' rate.
TEST(RailRings, FlowAllReduceMeetsTheChannelRingFormula) {
  const ClusterParams p = flat(4, 4, 8, 1.0, Fidelity::kFlow);
  const std::uint64_t bytes = 256ull << 20;
  const auto program = std::make_shared<CollectiveProgram>(Collective::kAllReduce, Algorithm::kRing,
                                                           GpuGroup{0, 16, 1}, bytes, 1 << 20, 4);
  ASSERT_EQ(program->channels(), 4u);
  const Ran r = run(p, program);
  ASSERT_TRUE(r.all_done);
  const double n = 16, C = 4, B = 400e9 / 8;
  const double latency =
      seconds(2 * p.injection_latency_ps + 2 * p.links[0].latency_ps + p.switch_latency_ps);
  const double analytic = 2 * (n - 1) / n * bytes / (C * B) + 2 * (n - 1) * latency;
  RecordProperty("simulated_us", std::to_string(seconds(r.finish) * 1e6));
  RecordProperty("analytic_us", std::to_string(analytic * 1e6));
  EXPECT_NEAR(seconds(r.finish) / analytic, 1.0, 0.01) << seconds(r.finish) << " vs " << analytic;

  // The flat ring (one channel, node-to-node hops from the last GPU of a node to the first of the next)
  // crosses rails through the spines and uses one NIC per node at a time: at least 4x slower.
  const Ran flat_ring = run(p, std::make_shared<CollectiveProgram>(Collective::kAllReduce, Algorithm::kRing,
                                                                   GpuGroup{0, 16, 1}, bytes));
  ASSERT_TRUE(flat_ring.all_done);
  EXPECT_GT(seconds(flat_ring.finish), 3.9 * seconds(r.finish));
}

}  // namespace
}  // namespace warpsim::cluster
