// Hierarchical reduce-scatter, all-gather and broadcast, and the double-binary-tree broadcast
// (models/cluster/hierarchical_collectives.*, tree_collectives.*): the schedules alone (bytes each rank
// sends on NVLink and on the network against the analytic counts, every send matched by one receive with
// the same peers, tag and size, every rank ending with a wait), then simulated on the cluster model: every
// GPU finishes, and the uncongested time is within 5% of the formulas in docs/validation.md in both
// fidelities.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <tuple>

#include "engine/kernel/engine.hpp"
#include "models/cluster/cluster_model.hpp"
#include "models/cluster/collectives.hpp"
#include "models/cluster/hierarchical_collectives.hpp"
#include "models/cluster/tree_collectives.hpp"
#include "partition/block_map.hpp"
#include "tests/models/cluster/sequential_cluster_run.hpp"

namespace warpsim::cluster {
namespace {

// What a schedule asks of every rank, summed: bytes sent to ranks of the same node and of other nodes, and
// the unmatched messages ((from, to, tag) -> sent bytes minus received bytes, count).
struct Traffic {
  std::vector<std::uint64_t> intra, inter, received;
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, std::pair<std::int64_t, int>> unmatched;
  bool ends_with_wait = true;
};

template <typename Schedule>
Traffic traffic(const Schedule& schedule, std::uint32_t n, std::uint32_t local) {
  Traffic t;
  t.intra.assign(n, 0);
  t.inter.assign(n, 0);
  t.received.assign(n, 0);
  for (std::uint32_t r = 0; r < n; ++r) {
    std::optional<RankOp> last;
    for (std::uint64_t i = 0;; ++i) {
      const auto op = schedule.op(r, i);
      if (!op) break;
      last = op;
      if (op->kind == OpKind::kSend) {
        EXPECT_NE(op->peer, r);
        (op->peer / local == r / local ? t.intra : t.inter)[r] += op->bytes;
        auto& u = t.unmatched[{r, op->peer, op->tag}];
        u.first += static_cast<std::int64_t>(op->bytes);
        ++u.second;
      } else if (op->kind == OpKind::kRecv) {
        t.received[r] += op->bytes;
        auto& u = t.unmatched[{op->peer, r, op->tag}];
        u.first -= static_cast<std::int64_t>(op->bytes);
        --u.second;
      }
    }
    t.ends_with_wait = t.ends_with_wait && last && last->kind == OpKind::kWait;
  }
  std::erase_if(t.unmatched, [](const auto& kv) { return kv.second.first == 0 && kv.second.second == 0; });
  return t;
}

TEST(HierarchicalSchedule, BytesPerRankMatchTheAnalyticCounts) {
  using Kind = HierarchicalSchedule::Kind;
  for (const auto& [n, L] : std::vector<std::pair<std::uint32_t, std::uint32_t>>{
           {16, 4}, {32, 8}, {12, 3}, {8, 1}, {8, 8}, {2, 2}, {6, 2}}) {
    const std::uint64_t M = n / L;
    const std::uint64_t S = std::uint64_t{n} * 4096;  // divisible: exact counts
    for (const Kind kind : {Kind::kReduceScatter, Kind::kAllGather, Kind::kAllReduce}) {
      SCOPED_TRACE(::testing::Message() << "n " << n << " L " << L << " kind " << static_cast<int>(kind));
      const HierarchicalSchedule s(kind, n, L, S);
      const Traffic t = traffic(s, n, L);
      EXPECT_TRUE(t.unmatched.empty()) << t.unmatched.size() << " unmatched (from, to, tag)";
      EXPECT_TRUE(t.ends_with_wait);
      const std::uint64_t factor = kind == Kind::kAllReduce ? 2 : 1;
      for (std::uint32_t r = 0; r < n; ++r) {
        EXPECT_EQ(t.intra[r], factor * (L - 1) * S / L) << "rank " << r;        // (L-1)/L S on NVLink
        EXPECT_EQ(t.inter[r], factor * (M - 1) * (S / L) / M) << "rank " << r;  // (M-1)/M S/L across nodes
        EXPECT_EQ(t.received[r], t.intra[r] + t.inter[r]);
      }
      EXPECT_EQ(s.steps(), factor * ((L - 1) + (M - 1)));
    }
  }
}

TEST(HierarchicalSchedule, UnevenSizesStillMatch) {
  // 1000 bytes over 12 ranks in nodes of 3 (4 nodes): slices differ by a byte, yet every message has its
  // receive, each node's ring moves (L-1) S in total and each rail's ring (M-1) x its slice of S.
  for (const auto kind :
       {HierarchicalSchedule::Kind::kReduceScatter, HierarchicalSchedule::Kind::kAllGather}) {
    const HierarchicalSchedule s(kind, 12, 3, 1000);
    const Traffic t = traffic(s, 12, 3);
    EXPECT_TRUE(t.unmatched.empty());
    std::uint64_t intra = 0, inter = 0;
    for (std::uint32_t r = 0; r < 12; ++r) {
      intra += t.intra[r];
      inter += t.inter[r];
    }
    EXPECT_EQ(intra, 4u * (3 - 1) * 1000);
    EXPECT_EQ(inter, (4u - 1) * 1000);
  }
  EXPECT_THROW(HierarchicalSchedule(HierarchicalSchedule::Kind::kAllGather, 10, 4, 1024),
               std::invalid_argument);
  EXPECT_THROW(HierarchicalSchedule(HierarchicalSchedule::Kind::kReduceScatter, 8, 0, 1024),
               std::invalid_argument);
}

TEST(TreeBroadcast, EveryRankReceivesTheBufferOnce) {
  for (std::uint32_t n = 2; n <= 40; ++n) {
    for (const std::uint64_t S : {std::uint64_t{1}, std::uint64_t{1000}, std::uint64_t{1} << 20}) {
      SCOPED_TRACE(::testing::Message() << "n " << n << " S " << S);
      const TreeBroadcast b(n, S, 64 << 10);
      const Traffic t = traffic(b, n, 1);
      EXPECT_TRUE(t.unmatched.empty()) << t.unmatched.size() << " unmatched (from, to, tag)";
      EXPECT_TRUE(t.ends_with_wait);
      EXPECT_EQ(t.received[0], 0u);
      EXPECT_EQ(t.inter[0], S);  // the root sends each half once
      std::uint64_t sent = 0, most = 0;
      for (std::uint32_t r = 0; r < n; ++r) {
        if (r > 0) {
          EXPECT_EQ(t.received[r], S) << "rank " << r;
        }
        sent += t.inter[r];
        most = std::max(most, t.inter[r]);
      }
      EXPECT_EQ(sent, (n - 1) * S);
      // Inner ranks of one tree are leaves of the other: nobody sends more than both halves to two children
      // plus one, and for even n nobody sends more than S (+1 byte of an odd split).
      EXPECT_LE(most, 3 * (S / 2 + 1));
      if (n % 2 == 0) {
        EXPECT_LE(most, S + 1);
      }
    }
  }
}

TEST(HierarchicalBroadcast, LeadersCrossTheNetworkOnceAndNodesChainOverNvlink) {
  for (const auto& [n, L] : std::vector<std::pair<std::uint32_t, std::uint32_t>>{
           {16, 4}, {32, 8}, {12, 3}, {8, 1}, {8, 8}, {2, 2}, {6, 2}}) {
    for (const std::uint64_t S : {std::uint64_t{0}, std::uint64_t{1000}, std::uint64_t{1} << 20}) {
      SCOPED_TRACE(::testing::Message() << "n " << n << " L " << L << " S " << S);
      const HierarchicalBroadcast b(n, L, S, 64 << 10);
      const Traffic t = traffic(b, n, L);
      EXPECT_TRUE(t.unmatched.empty()) << t.unmatched.size() << " unmatched (from, to, tag)";
      EXPECT_TRUE(t.ends_with_wait);
      const std::uint32_t M = n / L;
      for (std::uint32_t r = 0; r < n; ++r) {
        const std::uint32_t l = r % L, m = r / L;
        EXPECT_EQ(t.received[r], r == 0 ? 0 : S) << "rank " << r;
        EXPECT_EQ(t.inter[r], l == 0 && m + 1 < M ? S : 0) << "rank " << r;  // S once per node boundary
        EXPECT_EQ(t.intra[r], l + 1 < L ? S : 0) << "rank " << r;
      }
    }
  }
  EXPECT_THROW(HierarchicalBroadcast(10, 4, 1024, 512), std::invalid_argument);
}

const char* name(Fidelity f) {
  return f == Fidelity::kFlow ? "flow" : "packet";
}

TEST(HierarchicalReduceScatterAndAllGather, MatchTheTwoLevelFormula) {
  // 4 nodes x 4 GPUs, radix 8: the four nodes share each rail's leaf, so the per-rail rings stay there.
  // T = (L-1)/L S/B_nvlink + (M-1)/M (S/L)/B_net + (L-1) a_nvlink + (M-1) a_net.
  const std::uint64_t bytes = 64ull << 20;
  for (const Collective c : {Collective::kReduceScatter, Collective::kAllGather}) {
    for (const Fidelity f : {Fidelity::kPacket, Fidelity::kFlow}) {
      SCOPED_TRACE(::testing::Message() << to_string(c) << " " << name(f));
      const ClusterParams p = flat(4, 4, 8, 1.0, f);
      const Ran r = run(p, std::make_shared<CollectiveProgram>(c, Algorithm::kHierarchical,
                                                               GpuGroup{0, 16, 1}, bytes, 1 << 20, 4));
      ASSERT_TRUE(r.all_done);
      const double L = 4, M = 4, B_nv = p.nvlink.bandwidth_gbps * 1e9 / 8, B = 400e9 / 8;
      const double a_nv = seconds(2 * p.injection_latency_ps + 2 * p.nvlink.latency_ps + p.switch_latency_ps);
      const double a_net =
          seconds(2 * p.injection_latency_ps + 2 * p.links[0].latency_ps + p.switch_latency_ps);
      const double analytic =
          (L - 1) / L * bytes / B_nv + (M - 1) / M * (bytes / L) / B + (L - 1) * a_nv + (M - 1) * a_net;
      RecordProperty(std::string(to_string(c)) + "_" + name(f) + "_us",
                     std::to_string(seconds(r.finish) * 1e6));
      RecordProperty(std::string(to_string(c)) + "_analytic_us", std::to_string(analytic * 1e6));
      EXPECT_NEAR(seconds(r.finish) / analytic, 1.0, 0.05) << seconds(r.finish) << " vs " << analytic;
    }
    // Faster than the flat ring on the same GPUs, whose cross-node steps move S/16 at network speed.
    const ClusterParams p = flat(4, 4, 8, 1.0, Fidelity::kPacket);
    const Ran ring =
        run(p, std::make_shared<CollectiveProgram>(c, Algorithm::kRing, GpuGroup{0, 16, 1}, bytes));
    const Ran hier = run(p, std::make_shared<CollectiveProgram>(c, Algorithm::kHierarchical,
                                                                GpuGroup{0, 16, 1}, bytes, 1 << 20, 4));
    EXPECT_LT(hier.finish, ring.finish);
  }
}

// The pipeline model of docs/validation.md: K = ceil(S / 2c) slots of two chunks (one per tree) at the
// busiest senders (the root; inner ranks of one tree), each slot 2c/B on the wire plus the gap g between a
// slot's last send completing and the next slot's first send reaching the wire; then the last chunk goes
// down D = depth + 1 levels (tree B hangs below rank 0), each costing up to two chunk serializations, the
// hop latency a and, with packets, one packet's store-and-forward delay at the switch.
double tree_broadcast_model(const ClusterParams& p, std::uint32_t n, double S, double c) {
  const double B = p.links[0].bandwidth_gbps * 1e9 / 8;
  const double K = std::max(1.0, std::ceil(S / 2 / c));
  c = std::min(c, std::ceil(S / 2));
  const bool packet = p.fidelity == Fidelity::kPacket;
  // Packet: a send completes when its last packet leaves the NIC; a flow starts after the first link.
  const double g = seconds(2 * p.injection_latency_ps + (packet ? 0 : p.links[0].latency_ps));
  const double a = seconds(2 * p.injection_latency_ps + 2 * p.links[0].latency_ps + p.switch_latency_ps);
  const double store_forward = packet ? std::min<double>(p.packet_bytes, c) / B : 0;
  const double D = binary_tree_depth(n) + 1;
  return (K - 1) * (2 * c / B + g) + D * (2 * c / B + a + store_forward);
}

TEST(TreeBroadcast, LargeMessagesMatchThePipelineModel) {
  // 16 single-GPU nodes on one radix-32 leaf: every tree edge is NIC -> leaf -> NIC. Large messages
  // approach S/B (every rank receives S and sends at most about S).
  for (const std::uint64_t bytes : {16ull << 20, 64ull << 20}) {
    for (const std::uint64_t chunk : {256ull << 10, 1ull << 20}) {
      for (const Fidelity f : {Fidelity::kPacket, Fidelity::kFlow}) {
        SCOPED_TRACE(::testing::Message() << name(f) << " " << bytes << " B, chunk " << chunk);
        const ClusterParams p = flat(16, 1, 32, 1.0, f);
        const Ran r = run(p, std::make_shared<CollectiveProgram>(Collective::kBroadcast, Algorithm::kTree,
                                                                 GpuGroup{0, 16, 1}, bytes, chunk));
        ASSERT_TRUE(r.all_done);
        const double B = 400e9 / 8;
        const double model =
            tree_broadcast_model(p, 16, static_cast<double>(bytes), static_cast<double>(chunk));
        const std::string key = std::string(name(f)) + "_" + std::to_string(bytes >> 20) + "MiB_chunk" +
                                std::to_string(chunk >> 10) + "KiB";
        RecordProperty(key + "_us", std::to_string(seconds(r.finish) * 1e6));
        RecordProperty(key + "_model_us", std::to_string(model * 1e6));
        EXPECT_GE(seconds(r.finish), bytes / B);
        EXPECT_NEAR(seconds(r.finish) / model, 1.0, 0.05) << seconds(r.finish) << " vs " << model;
      }
    }
  }
}

// The comb's pipeline: K = ceil(S/c) chunks leave the root one per c/B_net + g (g as for the tree), then the
// last chunk crosses M-1 network hops and L-1 NVLink hops, each a serialization, the hop latency and (with
// packets) one packet's store-and-forward.
double hierarchical_broadcast_model(const ClusterParams& p, double L, double M, double S, double c) {
  const double B = p.links[0].bandwidth_gbps * 1e9 / 8, B_nv = p.nvlink.bandwidth_gbps * 1e9 / 8;
  const double K = std::max(1.0, std::ceil(S / c));
  c = std::min(c, S);
  const bool packet = p.fidelity == Fidelity::kPacket;
  const double g = seconds(2 * p.injection_latency_ps + (packet ? 0 : p.links[0].latency_ps));
  const double a = seconds(2 * p.injection_latency_ps + 2 * p.links[0].latency_ps + p.switch_latency_ps);
  const double a_nv = seconds(2 * p.injection_latency_ps + 2 * p.nvlink.latency_ps + p.switch_latency_ps);
  const double packet_bytes = packet ? std::min<double>(p.packet_bytes, c) : 0;
  return (K - 1) * (c / B + g) + (M - 1) * (c / B + a + packet_bytes / B) +
         (L - 1) * (c / B_nv + a_nv + packet_bytes / B_nv);
}

TEST(HierarchicalBroadcast, MatchesThePipelineModel) {
  // 4 nodes x 4 GPUs on radix-8 leaves (the leaders share rail 0's leaf).
  for (const std::uint64_t bytes : {1ull << 20, 64ull << 20}) {
    for (const Fidelity f : {Fidelity::kPacket, Fidelity::kFlow}) {
      SCOPED_TRACE(::testing::Message() << name(f) << " " << bytes << " B");
      const ClusterParams p = flat(4, 4, 8, 1.0, f);
      const Ran r =
          run(p, std::make_shared<CollectiveProgram>(Collective::kBroadcast, Algorithm::kHierarchical,
                                                     GpuGroup{0, 16, 1}, bytes, 1 << 20, 4));
      ASSERT_TRUE(r.all_done);
      const double model = hierarchical_broadcast_model(p, 4, 4, static_cast<double>(bytes), 1 << 20);
      const std::string key = std::string(name(f)) + "_" + std::to_string(bytes >> 20) + "MiB";
      RecordProperty(key + "_us", std::to_string(seconds(r.finish) * 1e6));
      RecordProperty(key + "_model_us", std::to_string(model * 1e6));
      EXPECT_NEAR(seconds(r.finish) / model, 1.0, 0.05) << seconds(r.finish) << " vs " << model;
    }
  }
}

TEST(TreeBroadcast, SmallMessagesBeatTheRing) {
  // 1 KiB on 16 GPUs: the ring pipeline crosses 15 hops, the tree about depth + 1.
  const ClusterParams p = flat(16, 1, 32, 1.0, Fidelity::kPacket);
  const GpuGroup all{0, 16, 1};
  const Ran ring =
      run(p, std::make_shared<CollectiveProgram>(Collective::kBroadcast, Algorithm::kRing, all, 1024));
  const Ran tree =
      run(p, std::make_shared<CollectiveProgram>(Collective::kBroadcast, Algorithm::kTree, all, 1024));
  ASSERT_TRUE(ring.all_done && tree.all_done);
  EXPECT_LT(seconds(tree.finish), 0.5 * seconds(ring.finish));
}

TEST(CollectiveAlgorithms, EachAlgorithmImplementsItsCollectives) {
  EXPECT_TRUE(supports(Algorithm::kTree, Collective::kBroadcast));
  EXPECT_FALSE(supports(Algorithm::kTree, Collective::kReduceScatter));
  EXPECT_TRUE(supports(Algorithm::kHierarchical, Collective::kReduceScatter));
  EXPECT_TRUE(supports(Algorithm::kHierarchical, Collective::kAllGather));
  EXPECT_FALSE(supports(Algorithm::kHierarchical, Collective::kAllToAll));
  EXPECT_EQ(supported_collectives(Algorithm::kTree), "allreduce, broadcast");
  EXPECT_TRUE(supports(Algorithm::kHierarchical, Collective::kBroadcast));
  EXPECT_EQ(supported_collectives(Algorithm::kHierarchical),
            "allreduce, allgather, reducescatter, broadcast");
  EXPECT_THROW(CollectiveProgram(Collective::kAllGather, Algorithm::kTree, GpuGroup{0, 4, 1}, 1024),
               std::invalid_argument);
  EXPECT_THROW(CollectiveProgram(Collective::kReduceScatter, Algorithm::kHierarchical, GpuGroup{0, 6, 1},
                                 1024, 1 << 20, 4),
               std::invalid_argument);
}

}  // namespace
}  // namespace warpsim::cluster
