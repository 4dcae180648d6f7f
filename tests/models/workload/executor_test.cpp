// Runs every GPU's generated op stream through a tiny message-level executor (compute from the compute
// model, communication free; sends asynchronous, receives and collectives blocking). Checks that the
// streams never deadlock and that the op-level timing reproduces the slot-level pipeline estimate.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "models/workload/gpu_program.hpp"
#include "models/workload/step_estimate.hpp"
#include "tests/models/workload/test_jobs.hpp"

namespace warpsim::workload {
namespace {

struct ExecResult {
  std::vector<double> schedule_end;  // per rank: time its first step-end op became current
  double end = 0;
};

ExecResult execute(const std::shared_ptr<const Job>& job, std::uint32_t steps) {
  const std::uint32_t n = job->world_size();
  std::vector<GpuProgram> progs;
  for (std::uint32_t r = 0; r < n; ++r) progs.emplace_back(job, r, steps);
  std::vector<std::uint64_t> pc(n, 0);
  std::vector<double> now(n, 0.0);
  ExecResult res;
  res.schedule_end.assign(n, -1.0);
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint64_t>, double> mailbox;  // (src, dst, tag)
  using GroupKey = std::tuple<int, std::uint32_t, std::uint32_t>;
  std::map<std::pair<GroupKey, std::uint32_t>, std::uint64_t> issued;  // (group, rank) -> collectives done
  struct Instance {
    std::uint32_t arrived = 0;
    double time = 0;
  };
  std::map<std::pair<GroupKey, std::uint64_t>, Instance> instances;
  std::vector<bool> waiting(n, false);  // registered at the current collective
  std::uint64_t remaining = 0;
  for (const auto& p : progs) remaining += p.size();
  while (remaining > 0) {
    bool progress = false;
    for (std::uint32_t r = 0; r < n; ++r) {
      while (pc[r] < progs[r].size()) {
        const auto pos = progs[r].position(pc[r]);
        if (pos.step == 0 && pos.slot == job->schedule().slots_per_stage() && res.schedule_end[r] < 0) {
          res.schedule_end[r] = now[r];
        }
        const Op o = progs[r].op(pc[r]);
        if (o.kind == OpKind::kCompute) {
          now[r] += job->compute().seconds(o);
        } else if (o.kind == OpKind::kSend) {
          EXPECT_TRUE(mailbox.emplace(std::tuple{r, o.peer, o.tag}, now[r]).second) << "duplicate tag";
        } else if (o.kind == OpKind::kRecv) {
          const auto it = mailbox.find({o.peer, r, o.tag});
          if (it == mailbox.end()) break;
          now[r] = std::max(now[r], it->second);
          mailbox.erase(it);
        } else if (o.kind == OpKind::kCollective) {
          const GroupKey g{static_cast<int>(o.group_kind), o.group.first, o.group.size()};
          const std::uint64_t seq = issued[{g, r}];
          auto& inst = instances[{g, seq}];
          if (!waiting[r]) {
            waiting[r] = true;
            ++inst.arrived;
            inst.time = std::max(inst.time, now[r]);
          }
          if (inst.arrived < o.group.size()) break;
          waiting[r] = false;
          now[r] = inst.time;
          ++issued[{g, r}];
        }
        ++pc[r];
        --remaining;
        progress = true;
      }
    }
    if (!progress) {
      ADD_FAILURE() << "deadlock with " << remaining << " ops left";
      return res;
    }
  }
  EXPECT_TRUE(mailbox.empty()) << mailbox.size() << " messages never received";
  res.end = *std::max_element(now.begin(), now.end());
  return res;
}

void check(const std::string& text, std::uint32_t steps) {
  const auto job = testing::make_job(text);
  const ExecResult res = execute(job, steps);
  const StepEstimate est = estimate_step(job);
  const double schedule_end = *std::max_element(res.schedule_end.begin(), res.schedule_end.end());
  EXPECT_NEAR(schedule_end / est.pipeline_seconds, 1.0, 1e-9);
  EXPECT_GE(res.end, steps * est.pipeline_seconds);
}

TEST(Executor, DenseInterleavedZero1) {
  check(testing::dense_spec_text(
            "tensor_parallel: 2 pipeline_parallel: 4 pipeline_schedule: INTERLEAVED_1F1B "
            "virtual_stages_per_rank: 2 data_parallel: 2 zero_stage: 1",
            "global_batch_sequences: 16 activation_recompute: true grad_bucket_bytes: 5000000"),
        2);
}

TEST(Executor, InterleavedWithPipelineScatterGather) {
  const std::string text = testing::dense_spec_text(
      "tensor_parallel: 4 pipeline_parallel: 2 pipeline_schedule: INTERLEAVED_1F1B virtual_stages_per_rank: "
      "2 "
      "pipeline_scatter_gather: true",
      "global_batch_sequences: 4 activation_recompute: true");
  check(text, 1);
  // Every received activation/gradient is a 1/TP slice followed by a TP all-gather of the whole tensor.
  const auto job = testing::make_job(text);
  const GpuProgram prog(job, job->pipeline_stride(), 1);  // stage 1, TP rank 0
  std::uint64_t recvs = 0, gathers = 0;
  for (std::uint64_t i = 0; i < prog.size(); ++i) {
    const Op o = prog.op(i);
    if (o.kind == OpKind::kSend || o.kind == OpKind::kRecv) {
      EXPECT_EQ(o.comm_bytes, job->layer_ops().activation_bytes / 4);
      recvs += o.kind == OpKind::kRecv;
    }
    if (o.name == "pp_activation_allgather" || o.name == "pp_grad_allgather") {
      ++gathers;
      EXPECT_EQ(o.comm_bytes, job->layer_ops().activation_bytes);
      EXPECT_EQ(o.group.size(), 4u);
      EXPECT_EQ(o.collective, CollectiveKind::kAllGather);
    }
  }
  EXPECT_GT(recvs, 0u);
  EXPECT_EQ(gathers, recvs);
}

TEST(Executor, PlainOneFOneBWithFewMicrobatches) {
  check(testing::dense_spec_text("pipeline_parallel: 8", "global_batch_sequences: 3"), 1);
}

// Uneven stages (Megatron-LM's first/last-stage layer counts): 2 | 6 layers interleaved over 2 chunks each
// (chunks of 1 and 3 layers) with ZeRO-3, and 2 | 4 | 2 with plain 1F1B and selective recomputation.
TEST(Executor, UnevenStagesInterleavedZero3) {
  check(testing::dense_spec_text(
            "pipeline_parallel: 2 pipeline_schedule: INTERLEAVED_1F1B virtual_stages_per_rank: 2 "
            "data_parallel: 2 zero_stage: 3 first_stage_layers: 2 last_stage_layers: 6",
            "global_batch_sequences: 8"),
        2);
}

TEST(Executor, UnevenStagesSelectiveRecompute) {
  check(testing::dense_spec_text(
            "tensor_parallel: 2 pipeline_parallel: 3 first_stage_layers: 2 last_stage_layers: 2",
            "global_batch_sequences: 3 activation_recompute_mode: SELECTIVE"),
        1);
}

// The split-backward schedules: ZB-H1 with ZeRO-3 (the gradient reduce-scatters move to the W passes) and
// selective recomputation; DualPipe with TP scatter/gather (a pair's forward receives and gathers its
// backward's gradient first) and an MoE DualPipe job with leading dense layers and ZeRO-3.
TEST(Executor, ZeroBubbleH1Zero3SelectiveRecompute) {
  check(testing::dense_spec_text("tensor_parallel: 2 pipeline_parallel: 4 pipeline_schedule: ZERO_BUBBLE_H1 "
                                 "data_parallel: 2 zero_stage: 3",
                                 "global_batch_sequences: 16 activation_recompute_mode: SELECTIVE"),
        2);
}

TEST(Executor, DualPipeWithPipelineScatterGather) {
  check(testing::dense_spec_text("tensor_parallel: 4 pipeline_parallel: 4 pipeline_schedule: DUAL_PIPE "
                                 "pipeline_scatter_gather: true",
                                 "global_batch_sequences: 10"),
        2);
}

TEST(Executor, DualPipeMoeZero3) {
  check(testing::moe_spec_text("tensor_parallel: 2 data_parallel: 4 expert_parallel: 2 pipeline_parallel: 2 "
                               "pipeline_schedule: DUAL_PIPE zero_stage: 3",
                               "global_batch_sequences: 16"),
        1);
}

TEST(Executor, MoeContextExpertZero3) {
  check(testing::moe_spec_text("tensor_parallel: 2 context_parallel: 2 data_parallel: 4 expert_parallel: 2 "
                               "pipeline_parallel: 2 zero_stage: 3",
                               "global_batch_sequences: 8 checkpoint_interval_steps: 1"),
        2);
}

}  // namespace
}  // namespace warpsim::workload
