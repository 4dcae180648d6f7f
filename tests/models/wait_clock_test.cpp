// The GPU LP's blocked-time clock per wait label (GpuLp::WaitClock, kept by commit handlers): every GPU's
// timeline is compute or blocked until it finishes, so busy + blocked time over all labels equals its finish
// time exactly, and each interval lands on the label of the Wait that blocked it.
#include <gtest/gtest.h>
#include <mpi.h>

#include <memory>
#include <numeric>
#include <vector>

#include "engine/engine.hpp"
#include "models/cluster/cluster_model.hpp"
#include "models/cluster/collectives.hpp"
#include "partition/block_map.hpp"

namespace warpsim::cluster {
namespace {

ClusterParams two_nodes() {
  ClusterParams p;
  p.nodes = 2;
  p.gpus_per_node = 2;
  p.tiers = 2;
  p.radix = 4;
  p.links[0] = {400, 500 * kPicosPerNano};
  p.links[1] = {400, 500 * kPicosPerNano};
  return p;
}

// GPU 0 computes, sends 1 MB to GPU 2 and waits for it (label 3); GPU 2 posts the receive, waits for it
// (label 2), then computes. GPUs 1 and 3 do nothing.
class PingProgram final : public GpuProgram {
 public:
  std::optional<GpuOp> op(std::uint32_t gpu, std::uint64_t index) const override {
    const std::vector<GpuOp> zero = {GpuOp::compute(1'000'000), GpuOp::send(2, 1'000'000, 7), GpuOp::wait(3)};
    const std::vector<GpuOp> two = {GpuOp::recv(0, 1'000'000, 7), GpuOp::wait(2), GpuOp::compute(500'000)};
    const std::vector<GpuOp>* ops = gpu == 0 ? &zero : gpu == 2 ? &two : nullptr;
    if (ops == nullptr || index >= ops->size()) return std::nullopt;
    return (*ops)[index];
  }
};

struct Clocks {
  std::vector<GpuLp::State> states;
  std::vector<GpuLp::WaitClock> clocks;
};

Clocks run(const ClusterParams& p, std::shared_ptr<const GpuProgram> program) {
  ClusterModel model(p, std::move(program));
  EngineConfig config;
  config.sync = SyncMode::kSequential;
  config.end_time = 10 * kPicosPerSecond;
  config.progress_seconds = 0;
  BlockLpMap map(model.lp_count(), 1);
  Engine engine(model, map, config, MPI_COMM_SELF);
  engine.run();
  Clocks c;
  for (std::uint32_t s = 0; s < model.gpus().size(); ++s) {
    c.states.push_back(model.gpus().state(s));
    c.clocks.push_back(model.gpus().wait_clock(s));
  }
  return c;
}

SimTime blocked(const GpuLp::WaitClock& c) {
  return std::accumulate(c.blocked_ps.begin(), c.blocked_ps.end(), SimTime{0});
}

TEST(WaitClock, BusyPlusBlockedIsTheFinishTimeAndLabelsAreKept) {
  const Clocks c = run(two_nodes(), std::make_shared<PingProgram>());
  for (std::size_t g = 0; g < c.states.size(); ++g) {
    ASSERT_TRUE(c.states[g].done) << "gpu " << g;
    EXPECT_FALSE(c.clocks[g].open) << "gpu " << g;
    EXPECT_EQ(c.states[g].busy_ps + blocked(c.clocks[g]), c.states[g].finish_ps) << "gpu " << g;
  }
  const auto& sender = c.clocks[0];
  const auto& receiver = c.clocks[2];
  EXPECT_GT(sender.blocked_ps[3], 0u);
  EXPECT_EQ(blocked(sender), sender.blocked_ps[3]);
  // The receiver waits for the sender's compute and the transfer: more than the compute alone.
  EXPECT_GT(receiver.blocked_ps[2], SimTime{1'000'000});
  EXPECT_EQ(blocked(receiver), receiver.blocked_ps[2]);
  EXPECT_EQ(c.states[2].finish_ps, receiver.blocked_ps[2] + 500'000);
  EXPECT_EQ(blocked(c.clocks[1]), 0u);
}

TEST(WaitClock, RingAllReduceWaitsAreUnlabelledAndAccountForTheWholeRun) {
  const Clocks c =
      run(two_nodes(), std::make_shared<CollectiveProgram>(Collective::kAllReduce, Algorithm::kRing,
                                                           GpuGroup{0, 4, 1}, 8ull << 20));
  for (std::size_t g = 0; g < c.states.size(); ++g) {
    EXPECT_EQ(c.states[g].busy_ps + blocked(c.clocks[g]), c.states[g].finish_ps) << "gpu " << g;
    EXPECT_EQ(blocked(c.clocks[g]), c.clocks[g].blocked_ps[0]) << "gpu " << g;
    EXPECT_GT(c.clocks[g].blocked_ps[0], 0u) << "gpu " << g;
  }
}

}  // namespace
}  // namespace warpsim::cluster
