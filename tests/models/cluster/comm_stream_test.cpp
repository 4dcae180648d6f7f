// The GPU LP's second stream (stream 1, the communication stream): a transfer posted on stream 1 overlaps
// compute on stream 0, so a GPU that computes C and moves a message that takes T on its own finishes at
// exactly max(C, T); serialized by kWaitStream it finishes at C + T. The stream-1 clock holds T, the
// stream-0 (exposed) clock max(0, T - C).
#include <gtest/gtest.h>

#include <memory>
#include <numeric>
#include <vector>

#include "tests/models/cluster/sequential_cluster_run.hpp"

namespace warpsim::cluster {
namespace {

constexpr std::uint64_t kBytes = 4'000'000;
constexpr std::uint8_t kLabel = 3;

// GPU 0 sends kBytes to GPU 2 and waits; GPU 2 receives and waits. One stream: the reference time T.
class OneStream final : public GpuProgram {
 public:
  std::optional<GpuOp> op(std::uint32_t gpu, std::uint64_t index) const override {
    const std::vector<GpuOp> zero = {GpuOp::send(2, kBytes, 7), GpuOp::wait(kLabel)};
    const std::vector<GpuOp> two = {GpuOp::recv(0, kBytes, 7), GpuOp::wait(kLabel)};
    const std::vector<GpuOp>* ops = gpu == 0 ? &zero : gpu == 2 ? &two : nullptr;
    if (ops == nullptr || index >= ops->size()) return std::nullopt;
    return (*ops)[index];
  }
};

// Both GPUs compute `compute_ps` on stream 0 and then wait for stream 1, which carries the same transfer.
// `serial`: stream 1 first waits for stream 0's compute (op 0), as a reduce must wait for its gradients.
class TwoStreams final : public GpuProgram {
 public:
  TwoStreams(SimTime compute_ps, bool serial, SimTime contended_factor = 1)
      : compute_ps_(compute_ps), serial_(serial), factor_(contended_factor) {}
  bool has_comm_stream() const override { return true; }
  SimTime contended_ps(std::uint32_t, SimTime duration) const override { return duration * factor_; }
  std::optional<GpuOp> op(std::uint32_t gpu, std::uint64_t index) const override {
    if (gpu != 0 && gpu != 2) return std::nullopt;
    // Stream 1's last op is its Wait: index 1, or 2 behind the serializing kWaitStream.
    const std::vector<GpuOp> ops = {GpuOp::compute(compute_ps_), GpuOp::wait_stream(serial_ ? 2 : 1, kLabel)};
    if (index >= ops.size()) return std::nullopt;
    return ops[index];
  }
  std::optional<GpuOp> comm_op(std::uint32_t gpu, std::uint64_t index) const override {
    std::vector<GpuOp> ops;
    if (serial_) ops.push_back(GpuOp::wait_stream(0));
    ops.push_back(gpu == 0 ? GpuOp::send(2, kBytes, 7) : GpuOp::recv(0, kBytes, 7));
    ops.push_back(GpuOp::wait(kLabel));
    if ((gpu != 0 && gpu != 2) || index >= ops.size()) return std::nullopt;
    return ops[index];
  }

 private:
  SimTime compute_ps_;
  bool serial_;
  SimTime factor_;
};

SimTime blocked(const GpuLp::WaitClock& c) {
  return std::accumulate(c.blocked_ps.begin(), c.blocked_ps.end(), SimTime{0});
}

const ClusterParams kTwoNodes = flat(2, 2, 4);

TEST(CommStream, TransferOverlapsComputeInClosedForm) {
  const Ran ref = run(kTwoNodes, std::make_shared<OneStream>());
  ASSERT_TRUE(ref.all_done);
  const GpuLp& ref_gpus = ref.model->gpus();
  const SimTime t_send = ref_gpus.state(0).finish_ps, t_recv = ref_gpus.state(2).finish_ps;
  ASSERT_GT(t_send, 0u);
  ASSERT_GT(t_recv, 0u);
  const SimTime t = std::max(t_send, t_recv);
  for (const SimTime c : {t / 3, 3 * t}) {
    for (const bool serial : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "compute " << c << " ps, serial " << serial);
      const Ran r = run(kTwoNodes, std::make_shared<TwoStreams>(c, serial));
      ASSERT_TRUE(r.all_done);
      const GpuLp& gpus = r.model->gpus();
      EXPECT_EQ(gpus.streams(), 2u);
      for (const auto& [gpu, alone] : {std::pair{0u, t_send}, std::pair{2u, t_recv}}) {
        SCOPED_TRACE(::testing::Message() << "gpu " << gpu);
        // Stream 1 started at 0 (overlap) or when the compute ended (serial); nothing else shares the links.
        const SimTime start = serial ? c : 0;
        const SimTime expect = std::max(c, start + alone);
        EXPECT_EQ(gpus.state(gpu).finish_ps, expect);
        EXPECT_EQ(gpus.comm_clock(gpu).blocked_ps[kLabel], alone);
        EXPECT_EQ(blocked(gpus.comm_clock(gpu)), alone);
        EXPECT_EQ(gpus.wait_clock(gpu).blocked_ps[kLabel], expect - c);  // exposed
        EXPECT_EQ(gpus.state(gpu).busy_ps + blocked(gpus.wait_clock(gpu)), expect);
        EXPECT_FALSE(gpus.comm_clock(gpu).open);
      }
      // The same events as the one-stream transfer, plus the compute op's completion on each GPU.
      EXPECT_EQ(r.result.total.committed, ref.result.total.committed + 2);
    }
  }
}

// A compute op that starts while stream 1 communicates runs contended_ps (here twice) as long: overlapped,
// the finish is max(2C, T); serialized, the compute ran before the transfer, so C + T as without contention.
TEST(CommStream, ComputeStartedDuringCommunicationIsContended) {
  const Ran ref = run(kTwoNodes, std::make_shared<OneStream>());
  const SimTime t_send = ref.model->gpus().state(0).finish_ps, t_recv = ref.model->gpus().state(2).finish_ps;
  const SimTime t = std::max(t_send, t_recv);
  for (const SimTime c : {t / 3, 3 * t}) {
    for (const bool serial : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "compute " << c << " ps, serial " << serial);
      const Ran r = run(kTwoNodes, std::make_shared<TwoStreams>(c, serial, 2));
      ASSERT_TRUE(r.all_done);
      const GpuLp& gpus = r.model->gpus();
      for (const auto& [gpu, alone] : {std::pair{0u, t_send}, std::pair{2u, t_recv}}) {
        SCOPED_TRACE(::testing::Message() << "gpu " << gpu);
        const SimTime busy = serial ? c : 2 * c;
        EXPECT_EQ(gpus.state(gpu).busy_ps, busy);
        EXPECT_EQ(gpus.state(gpu).finish_ps, serial ? c + alone : std::max(busy, alone));
        EXPECT_EQ(gpus.state(gpu).busy_ps + blocked(gpus.wait_clock(gpu)), gpus.state(gpu).finish_ps);
      }
    }
  }
}

TEST(CommStream, OneStreamProgramsHaveNoCommClock) {
  const Ran r = run(kTwoNodes, std::make_shared<OneStream>());
  EXPECT_EQ(r.model->gpus().streams(), 1u);
  EXPECT_EQ(blocked(r.model->gpus().comm_clock(0)), 0u);
}

}  // namespace
}  // namespace warpsim::cluster
