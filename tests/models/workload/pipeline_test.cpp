// Pipeline schedules: slot order invariants and the analytic bubble fractions, timed with the
// dependency-driven loop (compute only, no network).
#include <gtest/gtest.h>

#include <algorithm>
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

// ZB-H1: every F, B and W once per micro-batch, W after its B, B after its F, and at most p micro-batches
// between F and W on any stage (1F1B's first-stage peak; Qi et al. 2024, section 2.1).
TEST(PipelineSchedule, ZeroBubbleH1SlotsAndInFlight) {
  for (auto [p, m] : {std::pair{4u, 8u}, std::pair{4u, 2u}, std::pair{2u, 5u}, std::pair{8u, 32u}}) {
    const PipelineSchedule sched = PipelineSchedule::zero_bubble_h1(p, m);
    ASSERT_TRUE(sched.split_backward());
    ASSERT_EQ(sched.slots_per_stage(), 3ull * m);
    for (std::uint32_t s = 0; s < p; ++s) {
      std::set<std::tuple<bool, bool, std::uint32_t>> seen;
      std::uint64_t in_flight = 0, max_in_flight = 0;
      for (std::uint64_t k = 0; k < sched.slots_per_stage(); ++k) {
        const ScheduleSlot slot = sched.slot(s, k);
        ASSERT_LT(slot.microbatch, m);
        ASSERT_TRUE(seen.emplace(slot.forward, slot.weight, slot.microbatch).second) << "duplicate slot";
        if (slot.weight) {
          EXPECT_TRUE(seen.count({false, false, slot.microbatch})) << "W before its B";
          const auto prod = sched.producer(s, slot);
          ASSERT_TRUE(prod.has_value());
          EXPECT_EQ(prod->stage, s);
          EXPECT_FALSE(prod->slot.forward || prod->slot.weight);
        } else if (!slot.forward) {
          EXPECT_TRUE(seen.count({true, false, slot.microbatch})) << "B before its F";
        }
        in_flight += slot.forward ? 1 : 0;
        max_in_flight = std::max(max_in_flight, in_flight);
        in_flight -= slot.weight ? 1 : 0;
      }
      EXPECT_EQ(seen.size(), 3ull * m);
      EXPECT_LE(max_in_flight, std::min<std::uint64_t>(p, m)) << p << "x" << m << " stage " << s;
    }
  }
}

// Qi et al. 2024 (arXiv 2401.10241, section 2.1): ZB-H1's bubble is (p-1)(T_F + T_B - T_W) per stage,
// against 1F1B's (p-1)(T_F + T_B + T_W), with B the input-gradient pass and W the weight-gradient pass. The
// closed form holds for m >= p; checked here for equal and unequal pass times with T_W <= T_F.
TEST(PipelineBubble, ZeroBubbleH1MatchesClosedForm) {
  for (auto [p, m] : {std::pair{4u, 8u}, std::pair{8u, 32u}, std::pair{2u, 4u}, std::pair{16u, 64u},
                      std::pair{5u, 7u}, std::pair{4u, 4u}}) {
    for (auto [f, b, w] : {std::tuple{1.0, 1.0, 1.0}, std::tuple{1.0, 2.0, 1.0}, std::tuple{2.0, 1.0, 1.0},
                           std::tuple{1.0, 1.0, 0.5}, std::tuple{1.0, 1.5, 0.5}}) {
      const PipelineSchedule sched = PipelineSchedule::zero_bubble_h1(p, m);
      const PipelineTiming t = time_pipeline(sched, [&](std::uint32_t, const ScheduleSlot& s) {
        return s.forward ? f : s.weight ? w : b;
      });
      const double work = m * (f + b + w), bubble = (p - 1) * (f + b - w);
      EXPECT_NEAR(t.makespan, work + bubble, 1e-9) << p << "x" << m << " " << f << "/" << b << "/" << w;
      EXPECT_NEAR(t.bubble_fraction(), bubble / (work + bubble), 1e-12) << p << "x" << m;
      // The same passes under 1F1B (B and W fused into one backward) have the larger bubble.
      const PipelineTiming one =
          time_pipeline(PipelineSchedule(p, m),
                        [&](std::uint32_t, const ScheduleSlot& s) { return s.forward ? f : b + w; });
      EXPECT_NEAR(one.makespan, work + (p - 1) * (f + b + w), 1e-9) << p << "x" << m;
    }
  }
}

// DualPipe: every F, B and W of each chunk (direction) once, W after B after F, half the micro-batches each
// way, and PP + 1 chunks between F and B at most (the DualPipe README's activation column).
TEST(PipelineSchedule, DualPipeSlotsAndInFlight) {
  for (auto [p, m] :
       {std::pair{2u, 4u}, std::pair{4u, 8u}, std::pair{4u, 10u}, std::pair{8u, 20u}, std::pair{6u, 14u}}) {
    const PipelineSchedule sched = PipelineSchedule::dual_pipe(p, m);
    ASSERT_TRUE(sched.dual());
    ASSERT_EQ(sched.slots_per_stage(), 3ull * m);
    std::uint64_t peak = 0;
    for (std::uint32_t s = 0; s < p; ++s) {
      EXPECT_EQ(sched.virtual_stage(s, 0), s);
      EXPECT_EQ(sched.virtual_stage(s, 1), p - 1 - s);
      std::set<std::tuple<bool, bool, std::uint32_t, std::uint32_t>> seen;
      for (std::uint64_t k = 0; k < sched.slots_per_stage(); ++k) {
        const ScheduleSlot slot = sched.slot(s, k);
        ASSERT_LT(slot.microbatch, m / 2);
        ASSERT_LT(slot.chunk, 2u);
        ASSERT_TRUE(seen.emplace(slot.forward, slot.weight, slot.microbatch, slot.chunk).second);
        if (slot.weight) {
          EXPECT_TRUE(seen.count({false, false, slot.microbatch, slot.chunk})) << "W before its B";
        } else if (!slot.forward) {
          EXPECT_TRUE(seen.count({true, false, slot.microbatch, slot.chunk})) << "B before its F";
        }
        if (slot.forward && slot.paired) {
          const ScheduleSlot b = sched.slot(s, k + 1);
          EXPECT_TRUE(!b.forward && !b.weight && b.paired && b.chunk != slot.chunk) << "a pair is F then B";
        }
      }
      EXPECT_EQ(seen.size(), 3ull * m);
      peak = std::max(peak, sched.max_in_flight(s));
    }
    EXPECT_EQ(peak, p + 1ull) << p << "x" << m;
  }
  EXPECT_THROW(PipelineSchedule::dual_pipe(3, 12), std::invalid_argument);
  EXPECT_THROW(PipelineSchedule::dual_pipe(4, 6), std::invalid_argument);
  EXPECT_THROW(PipelineSchedule::dual_pipe(4, 9), std::invalid_argument);
}

// The DualPipe README's bubble, (PP/2 - 1)(F&B + B - 3W) with B the full backward (input + weight gradient)
// and F&B a forward-and-backward pair. warpsim runs a pair's two passes one after the other (no overlap of
// one's compute with the other's communication), so F&B = F + B here. With that, the timed schedule gives
// the closed form exactly where the README's figure is drawn: F = B (full) and W = B / 2. Other ratios
// differ from it (e.g. PP 8, F 2, B 1.5 + 0.5: 13 against 13.5), which the test pins as well, so a change
// of the slot order shows.
TEST(PipelineBubble, DualPipeMatchesTheReadmeClosedForm) {
  const auto bubble = [](std::uint32_t p, std::uint32_t m, double f, double b, double w) {
    const PipelineTiming t =
        time_pipeline(PipelineSchedule::dual_pipe(p, m), [&](std::uint32_t, const ScheduleSlot& s) {
          return s.forward ? f : s.weight ? w : b;
        });
    return t.makespan - m * (f + b + w);  // every rank's compute is m (F + B + W)
  };
  for (auto [p, m] : {std::pair{2u, 4u}, std::pair{4u, 8u}, std::pair{4u, 16u}, std::pair{6u, 14u},
                      std::pair{8u, 20u}, std::pair{8u, 32u}, std::pair{16u, 64u}}) {
    for (double unit : {1.0, 0.5, 3.0}) {
      const double f = 2 * unit, b_in = unit, w = unit, b = b_in + w;
      const double readme = (p / 2.0 - 1) * ((f + b) + b - 3 * w);
      EXPECT_NEAR(bubble(p, m, f, b_in, w), readme, 1e-9) << p << "x" << m << " unit " << unit;
    }
  }
  EXPECT_NEAR(bubble(8, 20, 2, 1.5, 0.5), 13.0, 1e-9);
  EXPECT_NEAR(bubble(8, 20, 1, 1, 1), 3.0, 1e-9);
}

// DualPipe from generated op streams (PP 4, 8 micro-batches): per layer the forward ops take 2 us in all,
// the input-gradient ops 1 us and the weight-gradient ops 1 us (measured table), so F = B = 2 W per chunk:
// the step's pipeline time is m (F + B + W) plus the README's bubble.
TEST(PipelineBubble, DualPipeGeneratedOpStreamsGiveTheClosedForm) {
  const std::string text = testing::dense_spec_text("pipeline_parallel: 4 pipeline_schedule: DUAL_PIPE",
                                                    "global_batch_sequences: 8");
  const auto probe = testing::make_job(text);
  const auto& L = probe->layer_ops();
  const auto compute_ops = [](const std::vector<LayerOp>& v) {
    return static_cast<double>(
        std::count_if(v.begin(), v.end(), [](const LayerOp& o) { return o.kind == OpKind::kCompute; }));
  };
  std::string csv = "op,flops,time_us\n";
  for (auto [list, total] :
       {std::pair{&L.forward, 2.0}, std::pair{&L.backward, 1.0}, std::pair{&L.weight_grad, 1.0}}) {
    for (const auto& op : *list)
      csv += std::string(op.name) + ",*," + std::to_string(total / compute_ops(*list)) + "\n";
  }
  for (const auto* list : {&L.head_forward, &L.head_backward, &L.embedding_forward, &L.embedding_backward}) {
    for (const auto& op : *list) csv += std::string(op.name) + ",*,0\n";
  }
  auto table = std::make_shared<const MeasuredTable>(MeasuredTable::parse(csv));
  const auto job = std::make_shared<const Job>(spec::to_job_params(spec::parse_job_spec_text(text)),
                                               EfficiencyParams{}, table);
  ASSERT_TRUE(job->schedule().dual());
  const StepEstimate est = estimate_step(job);
  // The per-op times went through decimal text: compare at the table's precision.
  const double layers = job->layers_in_chunk(0), u = 1e-6 * layers;
  const double f = 2 * u, b = 2 * u, w = u, m = job->microbatches();
  EXPECT_NEAR(est.pipeline_seconds, m * (f + b) + (4 / 2.0 - 1) * ((f + b) + b - 3 * w), 1e-10);
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

// ZB-H1 from generated op streams: forward layer ops 1 us, the input-gradient ops (B) 1 us, the
// weight-gradient ops (W) 1 us each (measured-table override; embedding and head 0), so per slot
// T_F = nF, T_B = nB and T_W = nW us times the stage's layers; the makespan must be the paper's closed form.
TEST(PipelineBubble, ZeroBubbleH1GeneratedOpStreamsGiveTheClosedForm) {
  for (auto [pp, batch] : {std::pair{4u, 16u}, std::pair{2u, 8u}, std::pair{8u, 16u}}) {
    const std::string text = testing::dense_spec_text(
        "pipeline_parallel: " + std::to_string(pp) + " pipeline_schedule: ZERO_BUBBLE_H1",
        "global_batch_sequences: " + std::to_string(batch));
    const auto probe = testing::make_job(text);
    const auto& L = probe->layer_ops();
    ASSERT_FALSE(L.weight_grad.empty());
    std::string csv = "op,flops,time_us\n";
    for (const auto* list : {&L.forward, &L.backward, &L.weight_grad}) {
      for (const auto& op : *list) csv += std::string(op.name) + ",*,1\n";
    }
    for (const auto* list :
         {&L.head_forward, &L.head_backward, &L.embedding_forward, &L.embedding_backward}) {
      for (const auto& op : *list) csv += std::string(op.name) + ",*,0\n";
    }
    auto table = std::make_shared<const MeasuredTable>(MeasuredTable::parse(csv));
    const auto job = std::make_shared<const Job>(spec::to_job_params(spec::parse_job_spec_text(text)),
                                                 EfficiencyParams{}, table);
    const auto count = [](const std::vector<LayerOp>& v) {
      return static_cast<double>(
          std::count_if(v.begin(), v.end(), [](const LayerOp& o) { return o.kind == OpKind::kCompute; }));
    };
    const double layers = job->layers_in_stage(0);
    const double f = count(L.forward) * layers * 1e-6, b = count(L.backward) * layers * 1e-6,
                 w = count(L.weight_grad) * layers * 1e-6;
    const double m = job->microbatches();
    const StepEstimate est = estimate_step(job);
    EXPECT_NEAR(est.pipeline_seconds, m * (f + b + w) + (pp - 1) * (f + b - w), 1e-12) << pp << "x" << batch;
  }
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
