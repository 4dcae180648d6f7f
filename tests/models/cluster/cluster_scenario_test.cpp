// Scenario tests of the packet-level network against closed-form expectations (sequential engine on
// MPI_COMM_SELF): ring all-reduce time vs 2(n-1)/n*S/B + 2(n-1)*latency, incast completion time and queue
// build-up at the bottleneck port, the slowdown of a 2:1 oversubscribed fat-tree, and storage requests.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <memory>

#include "engine/kernel/engine.hpp"
#include "models/cluster/cluster_model.hpp"
#include "models/cluster/collectives.hpp"
#include "models/cluster/fat_tree.hpp"
#include "partition/block_map.hpp"
#include "tests/models/cluster/sequential_cluster_run.hpp"

namespace warpsim::cluster {
namespace {

TEST(Scenario, RingAllReduceMatchesAnalyticModel) {
  // 4 nodes x 4 GPUs, group = rail 0 of every node: all four NICs hang off one leaf, so every ring step
  // crosses NIC -> leaf -> NIC, and the per-step latency is the same for all steps.
  const ClusterParams p = flat(4, 4, 8, 1.0);
  const std::uint64_t bytes = 64ull << 20;
  const GpuGroup group{0, 4, 4};
  const Ran r =
      run(p, std::make_shared<CollectiveProgram>(Collective::kAllReduce, Algorithm::kRing, group, bytes));
  ASSERT_TRUE(r.all_done);
  const double n = 4, B = 400e9 / 8;
  // Latency of one step: injection, two links, one switch hop, delivery to the GPU.
  const double latency =
      seconds(2 * p.injection_latency_ps + 2 * p.links[0].latency_ps + p.switch_latency_ps);
  const double analytic = 2 * (n - 1) / n * bytes / B + 2 * (n - 1) * latency;
  const double simulated = seconds(r.finish);
  RecordProperty("simulated_us", std::to_string(simulated * 1e6));
  RecordProperty("analytic_us", std::to_string(analytic * 1e6));
  EXPECT_NEAR(simulated / analytic, 1.0, 0.05) << simulated << " s vs analytic " << analytic << " s";
  // Bus bandwidth approaches the link bandwidth.
  const double busbw = bytes / simulated * bus_factor(Collective::kAllReduce, 4);
  EXPECT_GT(busbw, 0.95 * B);
  EXPECT_LE(busbw, B);
}

TEST(Scenario, RingAllReduceAcrossSpinesMatchesAnalyticModel) {
  // 8 nodes x 1 GPU, radix 8: two leaves, ring steps 3->4 and 7->0 cross a spine (the slowest step sets the
  // pace, so latency is the spine path's).
  const ClusterParams p = flat(8, 1, 8, 1.0);
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

// GPUs 1..senders each send `bytes` to GPU 0, which posts all receives and waits.
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

TEST(Scenario, IncastQueuesAtTheBottleneckPort) {
  // 8 single-GPU nodes on one leaf (radix 16): 7 senders share the leaf's port to NIC 0.
  const ClusterParams p = flat(8, 1, 16, 1.0);
  const std::uint64_t bytes = 4ull << 20;
  const Ran r = run(p, std::make_shared<Incast>(7, bytes));
  ASSERT_TRUE(r.all_done);
  const double B = 400e9 / 8;
  const double bound = 7.0 * bytes / B;
  EXPECT_NEAR(seconds(r.finish) / bound, 1.0, 0.02) << seconds(r.finish) << " vs " << bound;

  const auto& t = dynamic_cast<const FatTree&>(r.model->topology());
  const auto slot = r.model->switches().slot_of(t.leaf_lp(0));
  ASSERT_TRUE(slot);
  const SwitchLp::State& leaf = r.model->switches().state(*slot);
  const SwitchLp::Port& bottleneck = leaf.ports[0];  // down port 0 -> NIC of GPU 0
  RecordProperty("incast_us", std::to_string(seconds(r.finish) * 1e6));
  RecordProperty("bound_us", std::to_string(bound * 1e6));
  RecordProperty("max_depth_bytes", std::to_string(bottleneck.max_depth_bytes));
  RecordProperty("overflows", std::to_string(leaf.overflows));
  EXPECT_EQ(bottleneck.bytes_tx, 7 * bytes);
  // Seven inputs at line rate into one output: the backlog grows to about 6/7 of everything sent.
  EXPECT_GT(bottleneck.max_depth_bytes, 5 * bytes);
  EXPECT_GT(leaf.overflows, 0u) << "a 1 MiB buffer cannot hold the incast";
  // The port was busy for the whole transfer.
  EXPECT_NEAR(seconds(bottleneck.busy_ps) / bound, 1.0, 0.01);
  for (std::uint32_t port = 1; port < 8; ++port) EXPECT_EQ(leaf.ports[port].bytes_tx, 0u);
}

// Every GPU on the first leaf sends `messages` messages of `bytes` to its partner on the second leaf.
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

TEST(Scenario, OversubscribedFatTreeSlowsCrossLeafTraffic) {
  // Both trees have 4 down ports per leaf (8 single-GPU nodes = 2 leaves). Full bisection: radix 8, 4 up
  // ports. 2:1: radix 6, 2 up ports, so 4 NICs' worth of traffic shares 2 uplinks: about twice as slow.
  const std::uint64_t bytes = 1ull << 20;
  const std::uint32_t messages = 16;
  auto program = std::make_shared<CrossLeaf>(4, messages, bytes);
  const Ran full = run(flat(8, 1, 8, 1.0), program);
  const Ran over = run(flat(8, 1, 6, 2.0), program);
  ASSERT_TRUE(full.all_done && over.all_done);
  const double B = 400e9 / 8;
  const double per_nic = messages * bytes / B;  // time one NIC needs at line rate
  RecordProperty("full_us", std::to_string(seconds(full.finish) * 1e6));
  RecordProperty("oversubscribed_us", std::to_string(seconds(over.finish) * 1e6));
  // 2:1: the two uplinks carry 4 NICs' data -> at least 2x the NIC time, and close to it.
  EXPECT_GE(seconds(over.finish), 2.0 * per_nic * 0.99);
  EXPECT_LT(seconds(over.finish), 2.0 * per_nic * 1.25);
  // Full bisection: NIC-bound up to ECMP collisions.
  EXPECT_GE(seconds(full.finish), per_nic * 0.99);
  const double slowdown = seconds(over.finish) / seconds(full.finish);
  EXPECT_GT(slowdown, 1.5);
  EXPECT_LT(slowdown, 2.5);
}

class StorageWrites final : public GpuProgram {
 public:
  std::optional<GpuOp> op(std::uint32_t gpu, std::uint64_t i) const override {
    if (gpu >= 4) return std::nullopt;
    if (i == 0) return GpuOp::storage(0, 64ull << 20, true);
    if (i == 1) return GpuOp::wait();
    return std::nullopt;
  }
};

TEST(Scenario, StorageBandwidthAndPerClientLimit) {
  ClusterParams p = flat(4, 1, 8, 1.0);
  p.storage_targets = 1;
  p.storage_bandwidth_gbps = 200;
  p.storage_client_gbps = 100;
  p.storage_latency_ps = 10 * kPicosPerMicro;
  const Ran r = run(p, std::make_shared<StorageWrites>());
  ASSERT_TRUE(r.all_done);
  // Four 64 MiB writes share 200 Gb/s: the last completes after 4 x 64 MiB / 25 GB/s, plus latency twice.
  const double expected = 4.0 * (64 << 20) / 25e9 + 2 * 10e-6;
  EXPECT_NEAR(seconds(r.finish) / expected, 1.0, 0.01);
  const auto slot = r.model->storage().slot_of(r.model->topology().storage_lp(0));
  ASSERT_TRUE(slot);
  EXPECT_EQ(r.model->storage().state(*slot).bytes_written, 4ull * (64 << 20));
}

}  // namespace
}  // namespace warpsim::cluster
