// Failures, checkpoints and stragglers: the optimal checkpoint interval against Young/Daly, the analytic
// expected run against the Monte-Carlo replay, the Monte-Carlo replay's determinism, and the straggler GPU
// choice and program decorator.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "models/cluster/gpu_program.hpp"
#include "models/reliability/checkpoint_model.hpp"
#include "models/reliability/straggler_program.hpp"

namespace warpsim::reliability {
namespace {

// The simple case: checkpoint cost much smaller than the MTBF, instant restart. The numerical optimum of
// the expected-time model agrees with Young's sqrt(2 C M) within 10%.
TEST(CheckpointModel, OptimumAgreesWithYoungDaly) {
  for (double c : {10.0, 60.0, 300.0}) {
    for (double m_hours : {2.0, 8.0, 48.0}) {
      const CheckpointParams p{m_hours * 3600, c, 0};
      const double opt = optimal_interval_seconds(p);
      const double young = young_interval_seconds(p);
      EXPECT_NEAR(opt / young, 1.0, 0.10) << "C=" << c << " M=" << m_hours << "h";
      // Daly's higher-order estimate (FGCS 2006, eq. 37) is closer still.
      const double m = m_hours * 3600;
      const double daly = young * (1 + std::sqrt(c / (2 * m)) / 3 + c / (18 * m)) - c;
      EXPECT_NEAR(opt / daly, 1.0, 0.01) << "C=" << c << " M=" << m_hours << "h";
    }
  }
}

TEST(CheckpointModel, OptimumIsAMinimum) {
  const CheckpointParams p{4 * 3600, 120, 600};
  const double opt = optimal_interval_seconds(p);
  const double w = 1e6;
  const double at = expected_run(p, opt, w).wall_s;
  EXPECT_LT(at, expected_run(p, opt * 0.8, w).wall_s);
  EXPECT_LT(at, expected_run(p, opt * 1.25, w).wall_s);
}

TEST(CheckpointModel, NoFailuresMeansOnlyCheckpointOverhead) {
  const CheckpointParams p{1e15, 60, 600};
  const RunOutcome r = expected_run(p, 3600, 36000);
  EXPECT_NEAR(r.wall_s, 36000 + 10 * 60, 1e-3);
  EXPECT_NEAR(r.goodput(36000), 3600.0 / 3660, 1e-6);
  EXPECT_NEAR(r.failures, 0, 1e-6);
}

// The Monte-Carlo replay of a 30-day run converges to the analytic expectation: wall time, failures and
// the split of lost time (restarts included) within a few percent.
TEST(CheckpointModel, MonteCarloAgreesWithTheAnalyticModel) {
  const CheckpointParams p{3 * 3600, 180, 900};
  const double work = 30 * 86400;
  for (double interval : {1800.0, optimal_interval_seconds(p), 4 * 3600.0}) {
    const RunOutcome a = expected_run(p, interval, work);
    const RunOutcome mc = monte_carlo_run(p, interval, work, 7, 400);
    EXPECT_NEAR(mc.wall_s / a.wall_s, 1.0, 0.01) << interval;
    EXPECT_NEAR(mc.failures / a.failures, 1.0, 0.03) << interval;
    EXPECT_NEAR(mc.restart_s / a.restart_s, 1.0, 0.03) << interval;
    EXPECT_NEAR(mc.lost_work_s / a.lost_work_s, 1.0, 0.05) << interval;
  }
}

TEST(CheckpointModel, MonteCarloIsAFunctionOfTheSeed) {
  const CheckpointParams p{3600, 60, 300};
  const RunOutcome a = monte_carlo_run(p, 900, 86400, 11, 20);
  const RunOutcome b = monte_carlo_run(p, 900, 86400, 11, 20);
  const RunOutcome c = monte_carlo_run(p, 900, 86400, 12, 20);
  EXPECT_EQ(a.wall_s, b.wall_s);
  EXPECT_EQ(a.failures, b.failures);
  EXPECT_NE(a.wall_s, c.wall_s);
}

TEST(Stragglers, ChoiceIsExactDeterministicAndSeeded) {
  const auto a = pick_stragglers(1, 1000, 0.05);
  EXPECT_EQ(a.size(), 50u);
  EXPECT_EQ(a, pick_stragglers(1, 1000, 0.05));
  EXPECT_NE(a, pick_stragglers(2, 1000, 0.05));
  EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
  EXPECT_TRUE(pick_stragglers(1, 1000, 0).empty());
  EXPECT_EQ(pick_stragglers(1, 16, 1).size(), 16u);
  // A larger fraction keeps the smaller one's GPUs (the k smallest draws).
  const auto b = pick_stragglers(1, 1000, 0.10);
  EXPECT_TRUE(std::includes(b.begin(), b.end(), a.begin(), a.end()));
}

// Every GPU computes 1000 ps then sends: only the slow GPUs' compute ops are lengthened.
class ComputeThenSend final : public cluster::GpuProgram {
 public:
  std::optional<cluster::GpuOp> op(std::uint32_t gpu, std::uint64_t index) const override {
    if (index == 0) return cluster::GpuOp::compute(1000);
    if (index == 1) return cluster::GpuOp::send((gpu + 1) % 8, 4096, 0);
    return std::nullopt;
  }
};

TEST(Stragglers, ProgramSlowsOnlyTheChosenGpusComputeOps) {
  const StragglerProgram prog(std::make_shared<ComputeThenSend>(), 3, 8, {0.25, 1.5});
  ASSERT_EQ(prog.slow_gpus().size(), 2u);
  for (std::uint32_t g = 0; g < 8; ++g) {
    const bool slow = std::binary_search(prog.slow_gpus().begin(), prog.slow_gpus().end(), g);
    EXPECT_EQ(prog.op(g, 0)->duration_ps, slow ? 1500u : 1000u) << g;
    EXPECT_EQ(prog.op(g, 1)->bytes, 4096u);
    EXPECT_EQ(prog.op(g, 1)->duration_ps, 0u);
    EXPECT_FALSE(prog.op(g, 2).has_value());
  }
}

}  // namespace
}  // namespace warpsim::reliability
