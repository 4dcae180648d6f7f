// Pipeline schedules: slot order invariants and the analytic bubble fractions, timed with the
// dependency-driven loop (compute only, no network).
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "experiment/spec/job_spec.hpp"
#include "models/workload/measured_table.hpp"
#include "models/workload/pipeline_schedule.hpp"
#include "models/workload/step_estimate.hpp"
#include "tests/models/workload/test_jobs.hpp"

namespace warpsim::workload {
namespace {

TEST(PipelineSchedule, EverySlotOnceAndForwardBeforeBackward) {
  for (auto [p, m, v] : {std::tuple{4u, 8u, 1u}, std::tuple{4u, 2u, 1u}, std::tuple{4u, 8u, 2u},
                         std::tuple{3u, 6u, 3u}, std::tuple{1u, 5u, 1u}}) {
    const PipelineSchedule sched(p, m, v);
    for (std::uint32_t s = 0; s < p; ++s) {
      std::set<std::tuple<bool, std::uint32_t, std::uint32_t>> seen;
      std::uint64_t in_flight = 0, max_in_flight = 0;
      for (std::uint64_t k = 0; k < sched.slots_per_stage(); ++k) {
        const ScheduleSlot slot = sched.slot(s, k);
        ASSERT_LT(slot.microbatch, m);
        ASSERT_LT(slot.chunk, v);
        ASSERT_TRUE(seen.emplace(slot.forward, slot.microbatch, slot.chunk).second) << "duplicate slot";
        if (!slot.forward) {
          EXPECT_TRUE(seen.count({true, slot.microbatch, slot.chunk})) << "backward before its forward";
        }
        in_flight += slot.forward ? 1 : 0;
        max_in_flight = std::max(max_in_flight, in_flight);
        in_flight -= slot.forward ? 0 : 1;
      }
      EXPECT_EQ(seen.size(), 2ull * m * v);
      // 1F1B keeps at most p - s micro-batches' activations alive (its memory advantage over GPipe).
      if (v == 1) {
        EXPECT_LE(max_in_flight, std::min<std::uint64_t>(p - s, m));
      }
    }
  }
}

TEST(PipelineBubble, OneFOneBMatchesClosedForm) {
  for (auto [p, m] :
       {std::pair{4u, 8u}, std::pair{8u, 32u}, std::pair{2u, 1u}, std::pair{16u, 64u}, std::pair{5u, 7u}}) {
    const PipelineSchedule sched(p, m);
    // Backward costs twice the forward, as with compute only.
    const PipelineTiming t =
        time_pipeline(sched, [](std::uint32_t, const ScheduleSlot& s) { return s.forward ? 1.0 : 2.0; });
    EXPECT_NEAR(t.makespan, (m + p - 1) * 3.0, 1e-9) << p << "x" << m;
    EXPECT_NEAR(t.bubble_fraction(), double(p - 1) / (m + p - 1), 1e-12) << p << "x" << m;
  }
}

TEST(PipelineBubble, InterleavedShrinksTheBubbleByV) {
  for (auto [p, m, v] : {std::tuple{4u, 8u, 2u}, std::tuple{4u, 16u, 4u}, std::tuple{8u, 16u, 2u}}) {
    const PipelineSchedule sched(p, m, v);
    // Each chunk holds 1/v of the stage's layers.
    const PipelineTiming t = time_pipeline(
        sched, [v = v](std::uint32_t, const ScheduleSlot& s) { return (s.forward ? 1.0 : 2.0) / v; });
    // Narayanan et al. 2021: bubble time (p-1)/v * (tf + tb) for m * (tf + tb) of work.
    const double bubble = (p - 1.0) / v;
    EXPECT_NEAR(t.bubble_fraction(), bubble / (m + bubble), 1e-9) << p << "x" << m << "x" << v;
  }
}

// Every layer op costs 1 us forward and 2 us backward (measured-table override), embedding and head 0:
// the generated op streams, timed by the dependency loop, must show the closed-form bubble.
double generated_bubble(const std::string& parallel, std::uint64_t batch) {
  const std::string text =
      testing::dense_spec_text(parallel, "global_batch_sequences: " + std::to_string(batch));
  const auto probe = testing::make_job(text);
  std::string csv = "op,flops,time_us\n";
  for (const auto& op : probe->layer_ops().forward) csv += std::string(op.name) + ",*,1\n";
  for (const auto& op : probe->layer_ops().backward) csv += std::string(op.name) + ",*,2\n";
  for (const auto* list : {&probe->layer_ops().head_forward, &probe->layer_ops().head_backward,
                           &probe->layer_ops().embedding_forward, &probe->layer_ops().embedding_backward}) {
    for (const auto& op : *list) csv += std::string(op.name) + ",*,0\n";
  }
  auto table = std::make_shared<const MeasuredTable>(MeasuredTable::parse(csv));
  const auto job = std::make_shared<const Job>(spec::to_job_params(spec::parse_job_spec_text(text)),
                                               EfficiencyParams{}, table);
  return estimate_step(job).bubble_fraction;
}

TEST(PipelineBubble, GeneratedOpStreamsGiveTheClosedForm) {
  EXPECT_NEAR(generated_bubble("pipeline_parallel: 4", 16), 3.0 / (16 + 3), 1e-9);
  EXPECT_NEAR(generated_bubble("pipeline_parallel: 8 data_parallel: 2", 16), 7.0 / (8 + 7), 1e-9);
  EXPECT_NEAR(generated_bubble(
                  "pipeline_parallel: 2 pipeline_schedule: INTERLEAVED_1F1B virtual_stages_per_rank: 2", 8),
              1.0 / (2 * 8 + 1), 1e-9);
}

}  // namespace
}  // namespace warpsim::workload
