// NCCL's tuning model (models/cluster/nccl_tuning.*): latencies equal tuning.cc's formulas on hand-worked
// shapes, NCCL's protocol choice goes LL -> LL128 -> Simple as messages grow, and a collective program
// with a protocol cost starts with one Compute op and inflates its messages by the wire factor; channels
// drop for small messages as in enqueue.cc.
#include <gtest/gtest.h>

#include <algorithm>

#include "models/cluster/collectives.hpp"
#include "models/cluster/nccl_tuning.hpp"

namespace warpsim::cluster {
namespace {

NcclShape shape(std::uint32_t ranks, std::uint32_t nodes) {
  NcclShape s;
  s.ranks = ranks;
  s.nodes = nodes;
  s.simple_bus_bytes_per_s = 8 * 50e9;
  return s;
}

TEST(NcclTuning, LatenciesFollowTuningCc) {
  // One node of 8, ring: base + 2(n-1) NVLink steps. LL: 6.6 + 14 x 0.6; Simple: 8.4 + 14 x 3.4.
  EXPECT_NEAR(nccl_latency_us(Collective::kAllReduce, Algorithm::kRing, Protocol::kLL, shape(8, 1)), 15.0,
              1e-9);
  EXPECT_NEAR(nccl_latency_us(Collective::kAllReduce, Algorithm::kRing, Protocol::kSimple, shape(8, 1)), 56.0,
              1e-9);
  // 16 nodes x 8, ring Simple: 254 steps, 30 of them inter-node at 14 us, the rest at max(3.4, 3 x 1.0).
  EXPECT_NEAR(nccl_latency_us(Collective::kAllReduce, Algorithm::kRing, Protocol::kSimple, shape(128, 16)),
              8.4 + 224 * 3.4 + 30 * 14.0, 1e-9);
  // Tree Simple: base + 2 ((ppn-1) x 4.0 + log2(16) x 14).
  EXPECT_NEAR(nccl_latency_us(Collective::kAllReduce, Algorithm::kTree, Protocol::kSimple, shape(128, 16)),
              8.4 + 2 * (7 * 4.0 + 4 * 14.0), 1e-9);
  // One rank per node: the ring's network steps use the tree's network latency (LL: 5.0).
  EXPECT_NEAR(nccl_latency_us(Collective::kAllReduce, Algorithm::kRing, Protocol::kLL, shape(4, 4)),
              6.6 + 6 * 5.0, 1e-9);
}

TEST(NcclTuning, ProtocolChoiceGrowsWithSize) {
  const NcclShape s = shape(128, 16);
  EXPECT_EQ(nccl_cost(Collective::kAllReduce, Algorithm::kRing, 1024, s).protocol, Protocol::kLL);
  // LL128's lower per-step latency (4 vs 14 us per network step) outweighs its 8% bandwidth loss up to a
  // few GB on 16 nodes; Simple takes over beyond.
  EXPECT_EQ(nccl_cost(Collective::kAllReduce, Algorithm::kRing, 1ull << 30, s).protocol, Protocol::kLL128);
  EXPECT_EQ(nccl_cost(Collective::kAllReduce, Algorithm::kRing, 16ull << 30, s).protocol, Protocol::kSimple);
  int last = 0;
  for (std::uint64_t bytes = 1; bytes <= (64ull << 30); bytes *= 2) {
    const int p = static_cast<int>(nccl_cost(Collective::kAllReduce, Algorithm::kRing, bytes, s).protocol);
    EXPECT_GE(p, last) << bytes;
    last = p;
  }
  const NcclCost forced = nccl_cost(Collective::kAllReduce, Algorithm::kRing, 1ull << 30, s, Protocol::kLL);
  EXPECT_EQ(forced.protocol, Protocol::kLL);
  EXPECT_DOUBLE_EQ(forced.wire_factor, 2.0);
  // The modelled wire latency is taken off what is charged up front.
  NcclShape wired = s;
  wired.net_step_wire_ps = 1'000'000;  // 1 us per network step
  const NcclCost a = nccl_cost(Collective::kAllReduce, Algorithm::kRing, 1 << 20, s, Protocol::kSimple);
  const NcclCost b = nccl_cost(Collective::kAllReduce, Algorithm::kRing, 1 << 20, wired, Protocol::kSimple);
  EXPECT_EQ(a.start_ps - b.start_ps, SimTime{30} * 1'000'000);
}

TEST(NcclTuning, PredictedTimeFollowsGetAlgoTime) {
  // 16 nodes x 8 on 8 x 50 GB/s: ring Simple all-reduce of 1 GiB = latency x 1.4 (plateau) + bytes /
  // (400 GB/s x 128 / 254).
  const NcclShape s = shape(128, 16);
  const double bytes = 1ull << 30;
  EXPECT_NEAR(nccl_time_us(Collective::kAllReduce, Algorithm::kRing, Protocol::kSimple, 1ull << 30, s),
              (8.4 + 224 * 3.4 + 30 * 14.0) * 1.4 + bytes / (400e9 * 128 / 254) * 1e6, 1e-6);
  // Tree Simple: bus 0.92 x 400 GB/s, algorithm bandwidth half of it; 1 GiB is past the correction table.
  EXPECT_NEAR(nccl_time_us(Collective::kAllReduce, Algorithm::kTree, Protocol::kSimple, 1ull << 30, s),
              8.4 + 2 * (7 * 4.0 + 4 * 14.0) + bytes / (400e9 * 0.92 * 0.5) * 1e6, 1e-6);
  // 1 MiB: log2(1 MiB / 64) = 14, Simple's correction 0.5; LL128 across nodes 120/128 of the bus.
  EXPECT_NEAR(nccl_time_us(Collective::kAllReduce, Algorithm::kTree, Protocol::kSimple, 1 << 20, s),
              8.4 + 2 * (7 * 4.0 + 4 * 14.0) + (1 << 20) / (400e9 * 0.92 * 0.5 * 0.5) * 1e6, 1e-6);
  EXPECT_NEAR(nccl_time_us(Collective::kAllReduce, Algorithm::kTree, Protocol::kLL128, 1ull << 30, s),
              14.0 + 2 * (7 * 1.25 + 4 * 8.5) + bytes / (400e9 * 0.92 * 120 / 128 * 0.5) * 1e6, 1e-6);
  // No plateau on one node.
  EXPECT_NEAR(
      nccl_time_us(Collective::kAllReduce, Algorithm::kRing, Protocol::kSimple, 1ull << 30, shape(8, 1)),
      56.0 + bytes / (400e9 * 8 / 14) * 1e6, 1e-6);
}

TEST(NcclTuning, AllReduceAlgorithmChoiceIsNcclsRingOrTree) {
  // 16 nodes, medium sizes: the tree's log2(nodes) latency wins; large sizes: the ring's bandwidth. At 128
  // nodes the ring's 254 network steps (13.5 ms with Simple's plateau) outweigh the tree's 8% bandwidth
  // loss up to tens of GiB.
  const NcclShape wide = shape(128, 16);
  EXPECT_EQ(nccl_allreduce_algorithm(1 << 20, wide), Algorithm::kTree);
  EXPECT_EQ(nccl_allreduce_algorithm(16ull << 30, wide), Algorithm::kRing);
  EXPECT_EQ(nccl_allreduce_algorithm(16ull << 30, shape(1024, 128)), Algorithm::kTree);
  // The choice is the least predicted time over both algorithms' protocols.
  for (std::uint64_t bytes = 1 << 10; bytes <= (1ull << 34); bytes *= 4) {
    double ring = 1e300, tree = 1e300;
    for (const Protocol p : {Protocol::kLL, Protocol::kLL128, Protocol::kSimple}) {
      ring = std::min(ring, nccl_time_us(Collective::kAllReduce, Algorithm::kRing, p, bytes, wide));
      tree = std::min(tree, nccl_time_us(Collective::kAllReduce, Algorithm::kTree, p, bytes, wide));
    }
    EXPECT_EQ(nccl_allreduce_algorithm(bytes, wide), tree < ring ? Algorithm::kTree : Algorithm::kRing)
        << bytes;
  }
  // One node of 8: the tree's 0.92 x 0.5 bandwidth never beats the ring's 8/14 (LL and Simple latencies are
  // no lower), except where LL128's lower per-step latency decides.
  EXPECT_EQ(nccl_allreduce_algorithm(1ull << 30, shape(8, 1)), Algorithm::kRing);
  // Two ranks, or no bandwidth known: the ring.
  EXPECT_EQ(nccl_allreduce_algorithm(1 << 20, shape(2, 2)), Algorithm::kRing);
  NcclShape unknown = wide;
  unknown.simple_bus_bytes_per_s = 0;
  EXPECT_EQ(nccl_allreduce_algorithm(1 << 20, unknown), Algorithm::kRing);
  // A forced protocol compares both algorithms under it.
  EXPECT_EQ(nccl_allreduce_algorithm(1 << 20, wide, Protocol::kSimple), Algorithm::kTree);
}

TEST(NcclTuning, ChannelsDropForSmallMessagesAsEnqueueCcDoes) {
  // Simple: 512 threads x 64 bytes = 32 KiB per channel.
  EXPECT_EQ(nccl_channels(Algorithm::kRing, Protocol::kSimple, 16, 64 << 10, 8), 2u);
  EXPECT_EQ(nccl_channels(Algorithm::kRing, Protocol::kSimple, 16, (64 << 10) - 1, 8), 1u);
  EXPECT_EQ(nccl_channels(Algorithm::kRing, Protocol::kSimple, 1024, 1ull << 30, 8), 8u);
  // Ring LL: 512 threads x 8 bytes x nRanks, 4 MiB per channel at 1024 ranks.
  EXPECT_EQ(nccl_channels(Algorithm::kRing, Protocol::kLL, 1024, 1 << 20, 8), 1u);
  EXPECT_EQ(nccl_channels(Algorithm::kRing, Protocol::kLL, 1024, 12 << 20, 8), 3u);
  EXPECT_EQ(nccl_channels(Algorithm::kRing, Protocol::kLL128, 16, 0, 8), 1u);
}

TEST(NcclTuning, ProgramChargesStartAndWireBytes) {
  CollectiveProgram plain(Collective::kAllReduce, Algorithm::kRing, GpuGroup{0, 4, 1}, 4096);
  CollectiveProgram costed(Collective::kAllReduce, Algorithm::kRing, GpuGroup{0, 4, 1}, 4096);
  costed.set_protocol_cost(5'000'000, 2.0);
  const auto first = costed.op(0, 0);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->kind, OpKind::kCompute);
  EXPECT_EQ(first->duration_ps, 5'000'000u);
  for (std::uint64_t i = 0; plain.op(1, i); ++i) {
    const auto p = plain.op(1, i), c = costed.op(1, i + 1);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->kind, p->kind);
    EXPECT_EQ(c->bytes, 2 * p->bytes);
  }
}

}  // namespace
}  // namespace warpsim::cluster
