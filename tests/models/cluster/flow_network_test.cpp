// Flow fidelity (models/cluster/flow_network.*): scenario tests against closed forms (uncongested ring
// all-reduce, incast, 2:1 oversubscription, max-min sharing of a bottleneck), agreement with the packet
// fidelity on the same scenarios, far fewer events than packets, and the reverse property of the flow
// network LP (random starts and completions forward, then reverse, digests compared at every step).
#include <gtest/gtest.h>
#include <mpi.h>

#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>

#include "engine/kernel/engine.hpp"
#include "engine/lp_context.hpp"
#include "models/cluster/cluster_model.hpp"
#include "models/cluster/collectives.hpp"
#include "models/cluster/fat_tree.hpp"
#include "partition/block_map.hpp"
#include "tests/models/cluster/lp_harness.hpp"
#include "tests/models/cluster/sequential_cluster_run.hpp"

namespace warpsim::cluster {
namespace {

const FlowNetworkLp::State& network_of(const Ran& r) {
  return r.model->flow_network().state(0);
}

TEST(FlowScenario, RingAllReduceMatchesAnalyticModel) {
  const ClusterParams p = flat(4, 4, 8, 1.0, Fidelity::kFlow);
  const std::uint64_t bytes = 64ull << 20;
  const Ran r = run(p, std::make_shared<CollectiveProgram>(Collective::kAllReduce, Algorithm::kRing,
                                                           GpuGroup{0, 4, 4}, bytes));
  ASSERT_TRUE(r.all_done);
  const double n = 4, B = 400e9 / 8;
  const double latency =
      seconds(2 * p.injection_latency_ps + 2 * p.links[0].latency_ps + p.switch_latency_ps);
  const double analytic = 2 * (n - 1) / n * bytes / B + 2 * (n - 1) * latency;
  RecordProperty("simulated_us", std::to_string(seconds(r.finish) * 1e6));
  RecordProperty("analytic_us", std::to_string(analytic * 1e6));
  // No store-and-forward delay in the flow model: the formula is exact up to picosecond rounding.
  EXPECT_NEAR(seconds(r.finish) / analytic, 1.0, 1e-4) << seconds(r.finish) << " vs " << analytic;
  const auto& net = network_of(r);
  EXPECT_EQ(net.stats.flows_started, 4u * 6);
  EXPECT_EQ(net.stats.flows_completed, 4u * 6);
  EXPECT_EQ(net.stats.bytes_completed, 2 * 3 * bytes);  // 4 GPUs x 6 steps x S/4
  EXPECT_TRUE(net.flows.empty());
  EXPECT_TRUE(net.links.empty());
  EXPECT_TRUE(net.undo.empty()) << "every event committed";
}

TEST(FlowScenario, RingAllReduceAcrossSpinesWithinFivePercent) {
  const ClusterParams p = flat(8, 1, 8, 1.0, Fidelity::kFlow);
  const std::uint64_t bytes = 32ull << 20;
  const Ran r = run(p, std::make_shared<CollectiveProgram>(Collective::kAllReduce, Algorithm::kRing,
                                                           GpuGroup{0, 8, 1}, bytes));
  ASSERT_TRUE(r.all_done);
  const double n = 8, B = 400e9 / 8;
  const double latency = seconds(2 * p.injection_latency_ps + 2 * p.links[0].latency_ps +
                                 2 * p.links[1].latency_ps + 3 * p.switch_latency_ps);
  const double analytic = 2 * (n - 1) / n * bytes / B + 2 * (n - 1) * latency;
  EXPECT_NEAR(seconds(r.finish) / analytic, 1.0, 0.05) << seconds(r.finish) << " vs " << analytic;
}

class Incast final : public GpuProgram {
 public:
  Incast(std::uint32_t senders, std::uint64_t bytes) : senders_(senders), bytes_(bytes) {}
  std::optional<GpuOp> op(std::uint32_t gpu, std::uint64_t i) const override {
    if (gpu == 0) {
      if (i < senders_) return GpuOp::recv(static_cast<std::uint32_t>(i + 1), bytes_, 0);
      if (i == senders_) return GpuOp::wait();
      return std::nullopt;
    }
    if (gpu > senders_) return std::nullopt;
    if (i == 0) return GpuOp::send(0, bytes_, 0);
    if (i == 1) return GpuOp::wait();
    return std::nullopt;
  }

 private:
  std::uint32_t senders_;
  std::uint64_t bytes_;
};

TEST(FlowScenario, IncastCompletesAtTotalBytesOverBottleneck) {
  const ClusterParams p = flat(8, 1, 16, 1.0, Fidelity::kFlow);
  const std::uint64_t bytes = 4ull << 20;
  const Ran r = run(p, std::make_shared<Incast>(7, bytes));
  ASSERT_TRUE(r.all_done);
  const double bound = 7.0 * bytes / (400e9 / 8);
  RecordProperty("incast_us", std::to_string(seconds(r.finish) * 1e6));
  EXPECT_NEAR(seconds(r.finish) / bound, 1.0, 0.01) << seconds(r.finish) << " vs " << bound;
  const auto& net = network_of(r);
  EXPECT_EQ(net.stats.peak_active, 7u);
  EXPECT_GE(net.stats.schedules, 7u) << "every sender's rate is cut as the others join";
}

// Two flows share one bottleneck; a third shares a link with one of them only: max-min gives the two
// bottlenecked flows B/2 each and lets the third take the rest of its own link (B/2 as well here), and
// a flow alone gets B. Sender 1 and 2 -> GPU 0 (shared leaf port to NIC 0); sender 3 -> GPU 4.
class Shared final : public GpuProgram {
 public:
  explicit Shared(std::uint64_t bytes) : bytes_(bytes) {}
  std::optional<GpuOp> op(std::uint32_t gpu, std::uint64_t i) const override {
    switch (gpu) {
      case 0:
        if (i < 2) return GpuOp::recv(static_cast<std::uint32_t>(i + 1), bytes_, 0);
        return i == 2 ? std::optional<GpuOp>(GpuOp::wait()) : std::nullopt;
      case 1:
      case 2:
        if (i == 0) return GpuOp::send(0, bytes_, 0);
        return i == 1 ? std::optional<GpuOp>(GpuOp::wait()) : std::nullopt;
      case 3:
        if (i == 0) return GpuOp::send(4, bytes_, 0);
        return i == 1 ? std::optional<GpuOp>(GpuOp::wait()) : std::nullopt;
      case 4:
        if (i == 0) return GpuOp::recv(3, bytes_, 0);
        return i == 1 ? std::optional<GpuOp>(GpuOp::wait()) : std::nullopt;
      default:
        return std::nullopt;
    }
  }

 private:
  std::uint64_t bytes_;
};

TEST(FlowScenario, MaxMinSharesOnlyTheBottleneck) {
  const ClusterParams p = flat(8, 1, 16, 1.0, Fidelity::kFlow);
  const std::uint64_t bytes = 8ull << 20;
  const Ran r = run(p, std::make_shared<Shared>(bytes));
  ASSERT_TRUE(r.all_done);
  const double B = 400e9 / 8;
  const GpuLp& gpus = r.model->gpus();
  auto finish_of = [&](std::uint32_t gpu) {
    return seconds(gpus.state(*gpus.slot_of(r.model->topology().gpu_lp(gpu))).finish_ps);
  };
  EXPECT_NEAR(finish_of(0) / (2.0 * bytes / B), 1.0, 0.01);  // two flows at B/2
  EXPECT_NEAR(finish_of(4) / (1.0 * bytes / B), 1.0, 0.01);  // unaffected: full rate
}

class CrossLeaf final : public GpuProgram {
 public:
  CrossLeaf(std::uint32_t per_leaf, std::uint32_t messages, std::uint64_t bytes)
      : per_leaf_(per_leaf), messages_(messages), bytes_(bytes) {}
  std::optional<GpuOp> op(std::uint32_t gpu, std::uint64_t i) const override {
    const bool sender = gpu < per_leaf_;
    const std::uint32_t partner = sender ? gpu + per_leaf_ : gpu - per_leaf_;
    if (i < messages_) {
      const auto tag = static_cast<std::uint32_t>(i);
      return sender ? GpuOp::send(partner, bytes_, tag) : GpuOp::recv(partner, bytes_, tag);
    }
    if (i == messages_) return GpuOp::wait();
    return std::nullopt;
  }

 private:
  std::uint32_t per_leaf_, messages_;
  std::uint64_t bytes_;
};

TEST(FlowScenario, OversubscribedFatTreeSlowsCrossLeafTraffic) {
  const std::uint64_t bytes = 1ull << 20;
  const std::uint32_t messages = 16;
  auto program = std::make_shared<CrossLeaf>(4, messages, bytes);
  const Ran full = run(flat(8, 1, 8, 1.0, Fidelity::kFlow), program);
  const Ran over = run(flat(8, 1, 6, 2.0, Fidelity::kFlow), program);
  ASSERT_TRUE(full.all_done && over.all_done);
  const double per_nic = messages * bytes / (400e9 / 8);
  RecordProperty("full_us", std::to_string(seconds(full.finish) * 1e6));
  RecordProperty("oversubscribed_us", std::to_string(seconds(over.finish) * 1e6));
  EXPECT_GE(seconds(over.finish), 2.0 * per_nic * 0.99);
  EXPECT_LT(seconds(over.finish), 2.0 * per_nic * 1.25);
  EXPECT_GE(seconds(full.finish), per_nic * 0.99);
  const double slowdown = seconds(over.finish) / seconds(full.finish);
  EXPECT_GT(slowdown, 1.5);
  EXPECT_LT(slowdown, 2.5);
}

// The same scenarios in both fidelities: completion times agree (the flow model leaves out per-hop
// store-and-forward and packet interleaving), and the flow model needs far fewer events. Where ECMP puts
// several flows on one uplink, the fidelities differ by design: a packet sender's send completes once its
// NIC has serialized the message (switch buffers absorb the excess, the fabric is lossless without
// back-pressure), while a flow drains at its bottleneck rate end to end; the 16-GPU ring, whose four
// cross-node flows collide on spine links, shows that (checked only for direction and rough size).
TEST(FlowScenario, AgreesWithPacketFidelity) {
  struct Case {
    const char* name;
    std::uint32_t nodes, gpus_per_node, radix;
    double oversub;
    std::shared_ptr<const GpuProgram> program;
    double low, high;  // accepted flow / packet completion-time ratio
  };
  const std::vector<Case> cases = {
      {"ring_allreduce_4gpu_one_leaf_64MiB", 4, 4, 8, 1.0,
       std::make_shared<CollectiveProgram>(Collective::kAllReduce, Algorithm::kRing, GpuGroup{0, 4, 4},
                                           64ull << 20),
       0.98, 1.02},
      {"ring_allreduce_8gpu_two_leaves_32MiB", 8, 1, 8, 1.0,
       std::make_shared<CollectiveProgram>(Collective::kAllReduce, Algorithm::kRing, GpuGroup{0, 8, 1},
                                           32ull << 20),
       0.95, 1.05},
      {"incast_7x4MiB", 8, 1, 16, 1.0, std::make_shared<Incast>(7, 4ull << 20), 0.98, 1.02},
      {"cross_leaf_2to1_16x1MiB", 8, 1, 6, 2.0, std::make_shared<CrossLeaf>(4, 16, 1ull << 20), 0.9, 1.1},
      {"alltoall_16gpu_16MiB", 4, 4, 8, 1.0,
       std::make_shared<CollectiveProgram>(Collective::kAllToAll, Algorithm::kRing, GpuGroup{0, 16, 1},
                                           16ull << 20),
       0.9, 1.1},
      {"ring_allreduce_16gpu_ecmp_collisions_64MiB", 4, 4, 8, 1.0,
       std::make_shared<CollectiveProgram>(Collective::kAllReduce, Algorithm::kRing, GpuGroup{0, 16, 1},
                                           64ull << 20),
       1.0, 1.6},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Ran packet = run(flat(c.nodes, c.gpus_per_node, c.radix, c.oversub, Fidelity::kPacket), c.program);
    const Ran flow = run(flat(c.nodes, c.gpus_per_node, c.radix, c.oversub, Fidelity::kFlow), c.program);
    ASSERT_TRUE(packet.all_done && flow.all_done);
    const double ratio = seconds(flow.finish) / seconds(packet.finish);
    RecordProperty(std::string(c.name) + "_packet_us", std::to_string(seconds(packet.finish) * 1e6));
    RecordProperty(std::string(c.name) + "_flow_us", std::to_string(seconds(flow.finish) * 1e6));
    RecordProperty(std::string(c.name) + "_packet_events", std::to_string(packet.result.total.committed));
    RecordProperty(std::string(c.name) + "_flow_events", std::to_string(flow.result.total.committed));
    EXPECT_GE(ratio, c.low) << "flow " << seconds(flow.finish) << " s, packet " << seconds(packet.finish);
    EXPECT_LE(ratio, c.high) << "flow " << seconds(flow.finish) << " s, packet " << seconds(packet.finish);
    EXPECT_LT(flow.result.total.committed * 20, packet.result.total.committed);
  }
}

// ---- reverse property of the flow network LP ----

TEST(FlowReverseProperty, RandomStartsAndCompletions) {
  // 3 tiers, 16 GPUs: paths of 2 (NVLink) to 6 links, plenty of sharing among 16 GPUs.
  ClusterParams p = flat(4, 4, 8, 1.0, Fidelity::kFlow);
  p.tiers = 3;
  p.radix = 4;
  const FatTree topo(p);
  FlowNetworkLp type(topo);
  CountingScheduler scheduler;
  LpContext ctx(scheduler, kMaxPayloadBytes);
  const LpId lp = topo.flow_network_lp();
  const std::uint32_t slot = type.add_lp(lp);
  std::mt19937_64 rng(42);
  std::vector<RecordedEvent> events;
  std::vector<std::uint64_t> before;
  SimTime now = 0;
  std::uint64_t changed = 0;
  for (std::uint64_t i = 0; i < 600; ++i) {
    now += rng() % 2000 * kPicosPerNano / 10;
    RecordedEvent e{now, kFlowStart, EventKey{now, i + 1, static_cast<LpId>(100 + rng() % 16)}, {}};
    const auto& flows = type.state(slot).flows;
    if (!flows.empty() && rng() % 3 == 0) {  // complete an active flow (current or stale version)
      auto it = flows.begin();
      std::advance(it, static_cast<long>(rng() % flows.size()));
      FlowDone d;
      d.flow = it->first;
      d.version = it->second.version - (rng() % 4 == 0 ? 1 : 0);
      e.kind = kFlowDone;
      e.key.src = lp;
      std::memcpy(e.payload.data(), &d, sizeof d);
    } else {
      FlowStart m;
      m.src_gpu = static_cast<std::uint32_t>(rng() % 16);
      m.dst_gpu = static_cast<std::uint32_t>(rng() % 16);
      m.tag = static_cast<std::uint32_t>(rng() % 7);
      m.bytes = rng() % 5 == 0 ? 0 : 1 + rng() % (8 << 20);
      std::memcpy(e.payload.data(), &m, sizeof m);
    }
    before.push_back(type.digest(slot));
    ctx.bind(lp, e.time, e.key, e.kind, e.payload.data(), 7);
    type.forward(slot, ctx);
    if (type.digest(slot) != before.back()) ++changed;
    events.push_back(e);
  }
  EXPECT_GT(scheduler.sends, events.size());
  EXPECT_GT(changed, events.size() / 2);
  EXPECT_GT(type.state(slot).stats.peak_active, 10u);
  for (std::size_t i = events.size(); i-- > 0;) {
    RecordedEvent& e = events[i];
    ctx.bind(lp, e.time, e.key, e.kind, e.payload.data(), 7);
    type.reverse(slot, ctx);
    ASSERT_EQ(type.digest(slot), before[i]) << "reverse of event " << i << " (kind " << e.kind << ")";
  }
  EXPECT_TRUE(type.state(slot).flows.empty());
  EXPECT_TRUE(type.state(slot).links.empty());
  EXPECT_TRUE(type.state(slot).undo.empty());
}

}  // namespace
}  // namespace warpsim::cluster
