// Jobs that span several GPU types (a cluster with node groups, issue #26 item 2): each rank's compute ops
// are timed on its own GPU profile, the compute-only estimate is limited by the slowest stage with the 1F1B
// closed form, and each stage's memory is checked against its own GPUs' HBM.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "experiment/spec/job_spec.hpp"
#include "models/workload/gpu_program.hpp"
#include "models/workload/measured_table.hpp"
#include "models/workload/memory_estimate.hpp"
#include "models/workload/step_estimate.hpp"
#include "tests/models/workload/test_jobs.hpp"

namespace warpsim::workload {
namespace {

// A PP = 4 pipeline of the shared dense test job (8 layers, 2 per stage), TP = DP = 1, `m` micro-batches.
std::string pipeline_text(std::uint32_t m) {
  return testing::dense_spec_text(
      "pipeline_parallel: 4", "global_batch_sequences: " + std::to_string(m) + " micro_batch_sequences: 1");
}

// The embedding and output head take no time (measured-table rows of 0 us), so every stage does the same
// work; every other op is timed by the compute model of its rank's GPU.
std::shared_ptr<const MeasuredTable> zero_embedding_and_head(const std::string& text) {
  const auto probe = testing::make_job(text);
  std::string csv = "op,flops,time_us\n";
  for (const auto* list : {&probe->layer_ops().head_forward, &probe->layer_ops().head_backward,
                           &probe->layer_ops().embedding_forward, &probe->layer_ops().embedding_backward}) {
    for (const auto& op : *list) csv += std::string(op.name) + ",*,0\n";
  }
  return std::make_shared<const MeasuredTable>(MeasuredTable::parse(csv));
}

// The job with stage s on gpu[s] (one rank per stage).
std::shared_ptr<const Job> pipeline_job(std::uint32_t m, const std::vector<std::string>& gpus) {
  const std::string text = pipeline_text(m);
  JobParams p = spec::to_job_params(spec::parse_job_spec_text(text));
  for (std::uint32_t s = 0; s < gpus.size(); ++s) {
    p.rank_gpu_types.push_back({s, 1, gpus[s], "node_group[" + std::to_string(s) + "]"});
  }
  return std::make_shared<const Job>(p, EfficiencyParams{}, zero_embedding_and_head(text));
}

TEST(MixedGpus, EachRankIsTimedOnItsOwnProfile) {
  const auto job = pipeline_job(4, {"H100-SXM", "H100-SXM", "A100-80GB", "A100-80GB"});
  ASSERT_TRUE(job->mixed_gpus());
  EXPECT_EQ(job->gpu().name, "H100-SXM");  // the reference profile: the job's gpu_type
  EXPECT_EQ(job->gpu(0).name, "H100-SXM");
  EXPECT_EQ(job->gpu(1).name, "H100-SXM");
  EXPECT_EQ(job->gpu(2).name, "A100-80GB");
  EXPECT_EQ(job->gpu(3).name, "A100-80GB");
  // A layer's forward GEMM runs on stages 1 and 2 alike; the A100's takes longer.
  const GpuProgram h(job, 1), a(job, 2);
  std::uint64_t compared = 0;
  for (std::uint64_t i = 0; i < h.size() && compared < 8; ++i) {
    const Op oh = h.op(i), oa = a.op(i);
    if (oh.kind != OpKind::kCompute || oh.flops < 1e9) continue;
    ASSERT_EQ(std::string(oh.name), std::string(oa.name));
    EXPECT_GT(job->compute(2).seconds(oa), 1.5 * job->compute(1).seconds(oh)) << oh.name;
    EXPECT_DOUBLE_EQ(job->compute(2).seconds(oa), ComputeModel(find_gpu_profile("A100-80GB")).seconds(oa));
    ++compared;
  }
  EXPECT_EQ(compared, 8u);
}

// 1F1B with the slow generation on the last stage: that stage never waits after its first forward (each
// faster upstream stage delivers the next micro-batch before the slow one finishes its current backward), so
// the makespan is the fast stages' fill and drain plus the slow stage's m micro-batches:
//   T = (p - 1) (tf + tb)_fast + m (tf + tb)_slow,
// which for one generation is the familiar (m + p - 1)(tf + tb). Per-micro-batch times come from the
// single-generation jobs through that familiar form, so the mixed job is checked against them, not itself.
TEST(MixedGpus, SlowLastStageGivesTheOneFOneBClosedForm) {
  const std::uint32_t p = 4;
  for (const std::uint32_t m : {4u, 8u, 16u}) {
    const double h100 = estimate_step(pipeline_job(m, {})).pipeline_seconds / (m + p - 1);
    const double a100 = estimate_step(pipeline_job(m, {"A100-80GB", "A100-80GB", "A100-80GB", "A100-80GB"}))
                            .pipeline_seconds /
                        (m + p - 1);
    ASSERT_GT(a100, 2 * h100);  // H100 SXM runs this BF16 job more than twice as fast
    const StepEstimate mixed =
        estimate_step(pipeline_job(m, {"H100-SXM", "H100-SXM", "H100-SXM", "A100-80GB"}));
    EXPECT_NEAR(mixed.pipeline_seconds, (p - 1) * h100 + m * a100, 1e-12) << "m=" << m;
    // Limited by the slowest stage: at least its own work, at most an all-A100 pipeline.
    EXPECT_GE(mixed.pipeline_seconds, m * a100);
    EXPECT_LT(mixed.pipeline_seconds, (m + p - 1) * a100);
  }
}

// Wherever the slow stage sits, the step is bounded by its m micro-batches below and by the all-slow
// pipeline above, and the fast stages' bubble grows (they wait for it).
TEST(MixedGpus, SlowStageAnywhereBoundsTheStep) {
  const std::uint32_t p = 4, m = 8;
  const double a100 =
      estimate_step(pipeline_job(m, {"A100-80GB", "A100-80GB", "A100-80GB", "A100-80GB"})).pipeline_seconds /
      (m + p - 1);
  const double h100_bubble = estimate_step(pipeline_job(m, {})).bubble_fraction;
  for (std::uint32_t slow = 0; slow < p; ++slow) {
    std::vector<std::string> gpus(p, "H100-SXM");
    gpus[slow] = "A100-80GB";
    const StepEstimate e = estimate_step(pipeline_job(m, gpus));
    EXPECT_GE(e.pipeline_seconds, m * a100 - 1e-12) << "slow stage " << slow;
    EXPECT_LE(e.pipeline_seconds, (m + p - 1) * a100 + 1e-12) << "slow stage " << slow;
    EXPECT_GT(e.bubble_fraction, h100_bubble) << "slow stage " << slow;
  }
}

// A stage split over two generations runs each op at its slower GPU's time in the estimate.
TEST(MixedGpus, AStageOnTwoGenerationsIsTimedAtItsSlowerGpu) {
  const std::string text = testing::dense_spec_text("pipeline_parallel: 2 data_parallel: 2",
                                                    "global_batch_sequences: 8 micro_batch_sequences: 1");
  JobParams p = spec::to_job_params(spec::parse_job_spec_text(text));
  // Ranks 0, 1: stage 0 (DP 2); ranks 2, 3: stage 1. Rank 1 alone is an A100.
  p.rank_gpu_types = {{0, 1, "H100-SXM", "g0"}, {1, 1, "A100-80GB", "g1"}, {2, 2, "H100-SXM", "g2"}};
  const auto mixed = std::make_shared<const Job>(p);
  ASSERT_EQ(mixed->stage_computes(0).size(), 2u);
  ASSERT_EQ(mixed->stage_computes(1).size(), 1u);
  p.rank_gpu_types = {{0, 2, "A100-80GB", "g0"}, {2, 2, "H100-SXM", "g1"}};
  const auto stage0_a100 = std::make_shared<const Job>(p);
  EXPECT_DOUBLE_EQ(estimate_step(mixed).pipeline_seconds, estimate_step(stage0_a100).pipeline_seconds);
}

TEST(MixedGpus, BadRangesAndProfilesAreRefused) {
  JobParams p = spec::to_job_params(spec::parse_job_spec_text(pipeline_text(4)));
  p.rank_gpu_types = {{0, 2, "H100-SXM", "node_group[0]"}, {2, 2, "Z100", "node_group[1]"}};
  try {
    Job job(p);
    FAIL() << "unknown GPU type accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("node_group[1].gpu_type: unknown GPU type 'Z100'"),
              std::string::npos)
        << e.what();
  }
  p.rank_gpu_types = {{0, 2, "H100-SXM", "a"}, {2, 1, "A100-80GB", "b"}};  // rank 3 uncovered
  EXPECT_THROW(Job{p}, std::invalid_argument);
  p.rank_gpu_types = {{0, 2, "H100-SXM", "a"}, {1, 3, "A100-80GB", "b"}};  // overlap
  EXPECT_THROW(Job{p}, std::invalid_argument);
  p.model.dtype = DType::kFp8;  // the A100 has no FP8 tensor cores
  p.rank_gpu_types = {{0, 2, "H100-SXM", "a"}, {2, 2, "A100-80GB", "node_group[1]"}};
  try {
    Job job(p);
    FAIL() << "FP8 on an A100 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("model.dtype"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("node_group[1]"), std::string::npos) << e.what();
  }
}

// Each stage against its own GPUs' HBM: a job whose first stage needs more than 80 GB fits when that stage
// sits on H200s (141 GB) and is refused, naming the stage and the H100's HBM, when it sits on H100s.
TEST(MixedGpus, EachStageIsCheckedAgainstItsOwnHbm) {
  const std::string text = testing::dense_spec_text(
      "pipeline_parallel: 2",
      "global_batch_sequences: 160 micro_batch_sequences: 80 allow_hbm_overflow: true");
  JobParams p = spec::to_job_params(spec::parse_job_spec_text(text));
  const MemoryEstimate m = estimate_memory(Job(p));
  ASSERT_GT(m.stages[0].total_bytes(), 80e9);  // the premise: stage 0 fits an H200 only
  ASSERT_LT(m.stages[0].total_bytes(), 141e9);
  ASSERT_LT(m.stages[1].total_bytes(), 80e9);
  p.training.allow_hbm_overflow = false;
  p.gpu_type = "H200";
  p.rank_gpu_types = {{0, 1, "H200", "node_group[0]"}, {1, 1, "H100-SXM", "node_group[1]"}};
  const Job fits(p);
  EXPECT_DOUBLE_EQ(estimate_memory(fits).stage_hbm_bytes[0], 141e9);
  EXPECT_DOUBLE_EQ(estimate_memory(fits).stage_hbm_bytes[1], 80e9);
  p.rank_gpu_types = {{0, 1, "H100-SXM", "node_group[0]"}, {1, 1, "H200", "node_group[1]"}};
  try {
    Job job(p);
    FAIL() << "stage 0 over the H100's HBM accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("pipeline stage 0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("H100-SXM's HBM of 80.0 GB"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace warpsim::workload
