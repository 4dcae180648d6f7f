// The GPU LP's blocked-time clock per wait label (GpuLp::WaitClock, kept by commit handlers): every GPU's
// timeline is compute or blocked until it finishes, so busy + blocked time over all labels equals its finish
// time exactly, and each interval lands on the label of the Wait that blocked it.
#include <gtest/gtest.h>

#include <memory>
#include <numeric>
#include <vector>

#include "models/cluster/collectives.hpp"
#include "tests/models/cluster/sequential_cluster_run.hpp"

namespace warpsim::cluster {
namespace {

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

SimTime blocked(const GpuLp::WaitClock& c) {
  return std::accumulate(c.blocked_ps.begin(), c.blocked_ps.end(), SimTime{0});
}

// 2 nodes x 2 GPUs on one radix-4 leaf.
const ClusterParams kTwoNodes = flat(2, 2, 4);

TEST(WaitClock, BusyPlusBlockedIsTheFinishTimeAndLabelsAreKept) {
  const Ran r = run(kTwoNodes, std::make_shared<PingProgram>());
  const GpuLp& gpus = r.model->gpus();
  for (std::uint32_t g = 0; g < gpus.size(); ++g) {
    ASSERT_TRUE(gpus.state(g).done) << "gpu " << g;
    EXPECT_FALSE(gpus.wait_clock(g).open) << "gpu " << g;
    EXPECT_EQ(gpus.state(g).busy_ps + blocked(gpus.wait_clock(g)), gpus.state(g).finish_ps) << "gpu " << g;
  }
  const auto& sender = gpus.wait_clock(0);
  const auto& receiver = gpus.wait_clock(2);
  EXPECT_GT(sender.blocked_ps[3], 0u);
  EXPECT_EQ(blocked(sender), sender.blocked_ps[3]);
  // The receiver waits for the sender's compute and the transfer: more than the compute alone.
  EXPECT_GT(receiver.blocked_ps[2], SimTime{1'000'000});
  EXPECT_EQ(blocked(receiver), receiver.blocked_ps[2]);
  EXPECT_EQ(gpus.state(2).finish_ps, receiver.blocked_ps[2] + 500'000);
  EXPECT_EQ(blocked(gpus.wait_clock(1)), 0u);
}

TEST(WaitClock, RingAllReduceWaitsAreUnlabelledAndAccountForTheWholeRun) {
  const Ran r = run(kTwoNodes, std::make_shared<CollectiveProgram>(Collective::kAllReduce, Algorithm::kRing,
                                                                   GpuGroup{0, 4, 1}, 8ull << 20));
  ASSERT_TRUE(r.all_done);
  const GpuLp& gpus = r.model->gpus();
  for (std::uint32_t g = 0; g < gpus.size(); ++g) {
    const GpuLp::WaitClock& clock = gpus.wait_clock(g);
    EXPECT_EQ(gpus.state(g).busy_ps + blocked(clock), gpus.state(g).finish_ps) << "gpu " << g;
    EXPECT_EQ(blocked(clock), clock.blocked_ps[0]) << "gpu " << g;
    EXPECT_GT(clock.blocked_ps[0], 0u) << "gpu " << g;
  }
}

}  // namespace
}  // namespace warpsim::cluster
