// Per-GPU op streams: p2p sends/receives pair up, collectives line up across their group members, groups
// are consistent, and data-parallel / ZeRO byte counts match the closed forms.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <tuple>
#include <vector>

#include "models/workload/gpu_program.hpp"
#include "tests/models/workload/test_jobs.hpp"

namespace warpsim::workload {
namespace {

std::vector<Op> all_ops(const GpuProgram& prog) {
  std::vector<Op> ops;
  for (std::uint64_t i = 0; i < prog.size(); ++i) ops.push_back(prog.op(i));
  return ops;
}

// Checks one job: message pairing, collective agreement and group membership.
void check_stream_consistency(const std::shared_ptr<const Job>& job, std::uint32_t steps) {
  const std::uint32_t n = job->world_size();
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint64_t>, std::pair<int, std::uint64_t>> messages;
  // Per group (kind, first member): the sequence of (name, bytes) each member issued.
  std::map<std::tuple<int, std::uint32_t, std::uint32_t>,
           std::map<std::uint32_t, std::vector<std::pair<std::string_view, std::uint64_t>>>>
      coll;
  for (std::uint32_t r = 0; r < n; ++r) {
    GpuProgram prog(job, r, steps);
    for (const Op& o : all_ops(prog)) {
      if (o.kind == OpKind::kSend) {
        ASSERT_LT(o.peer, n);
        auto& m = messages[{r, o.peer, o.tag}];
        m.first += 1;
        m.second = o.comm_bytes;
      } else if (o.kind == OpKind::kRecv) {
        auto& m = messages[{o.peer, r, o.tag}];
        m.first -= 1;
        EXPECT_EQ(m.second == 0 || m.second == o.comm_bytes, true);
      } else if (o.kind == OpKind::kCollective) {
        ASSERT_LT(o.group.index_of(r), o.group.size())
            << "rank " << r << " not in its own " << to_string(o.group_kind) << " group";
        for (std::uint32_t i = 0; i < o.group.size(); ++i) ASSERT_LT(o.group.member(i), n);
        coll[{static_cast<int>(o.group_kind), o.group.first, o.group.size()}][r].emplace_back(o.name,
                                                                                              o.comm_bytes);
      }
    }
  }
  for (const auto& [key, m] : messages) {
    EXPECT_EQ(m.first, 0) << "unmatched send/recv " << std::get<0>(key) << "->" << std::get<1>(key) << " tag "
                          << std::get<2>(key);
  }
  for (const auto& [key, members] : coll) {
    const std::uint32_t size = std::get<2>(key);
    EXPECT_EQ(members.size(), size) << "group kind " << std::get<0>(key) << " first " << std::get<1>(key);
    const auto& ref = members.begin()->second;
    for (const auto& [rank, seq] : members)
      EXPECT_EQ(seq, ref) << "rank " << rank << " disagrees with its group";
  }
}

TEST(GpuProgram, DenseStreamsAreConsistent) {
  check_stream_consistency(
      testing::make_job(testing::dense_spec_text(
          "tensor_parallel: 2 pipeline_parallel: 4 pipeline_schedule: INTERLEAVED_1F1B "
          "virtual_stages_per_rank: 2 "
          "data_parallel: 2 zero_stage: 1 sequence_parallel: true",
          "global_batch_sequences: 16 activation_recompute: true grad_bucket_bytes: 10000000")),
      2);
}

TEST(GpuProgram, MoeContextZero3StreamsAreConsistent) {
  check_stream_consistency(
      testing::make_job(testing::moe_spec_text("tensor_parallel: 2 context_parallel: 2 data_parallel: 4 "
                                               "expert_parallel: 2 pipeline_parallel: 2 zero_stage: 3",
                                               "global_batch_sequences: 8 checkpoint_interval_steps: 2")),
      3);
}

TEST(GpuProgram, LazyAccessMatchesSequentialAccessAndPositionsAreRight) {
  const auto job = testing::make_job(testing::dense_spec_text(
      "pipeline_parallel: 2 data_parallel: 2", "global_batch_sequences: 8 checkpoint_interval_steps: 2"));
  GpuProgram prog(job, 3, 4);  // stage 1
  EXPECT_EQ(prog.stage(), 1u);
  EXPECT_EQ(prog.size(), 4 * prog.ops_per_step() + 2);  // checkpoints after steps 1 and 3
  const auto ops = all_ops(prog);
  EXPECT_EQ(ops.back().kind, OpKind::kCheckpointWrite);
  EXPECT_EQ(ops.back().step, 3u);
  EXPECT_EQ(ops[prog.ops_per_step()].kind, OpKind::kRecv);  // step 1 starts with receiving activations
  EXPECT_EQ(ops[prog.ops_per_step()].step, 1u);
  for (std::uint64_t i = prog.size(); i-- > 0;) {
    const Op o = prog.op(i);  // random (reverse) order gives the same ops
    EXPECT_EQ(o.name, ops[i].name);
    EXPECT_EQ(o.tag, ops[i].tag);
  }
  EXPECT_THROW(prog.op(prog.size()), std::out_of_range);
}

double sum_bytes(const GpuProgram& prog, std::string_view name) {
  double b = 0;
  for (const Op& o : all_ops(prog)) {
    if (o.name == name) b += static_cast<double>(o.comm_bytes);
  }
  return b;
}

double ring_traffic(const GpuProgram& prog, Phase phase) {
  double b = 0;
  for (const Op& o : all_ops(prog)) {
    if (o.kind == OpKind::kCollective && o.phase == phase && o.group_kind == GroupKind::kDataContext) {
      b += ring_bytes_sent_per_member(o.collective, o.group.size(), static_cast<double>(o.comm_bytes));
    }
  }
  return b;
}

TEST(DataParallel, AllReduceBytesMatchRingFormula) {
  const std::uint32_t dp = 4;
  const auto job = testing::make_job(testing::dense_spec_text(
      "tensor_parallel: 2 data_parallel: 4", "global_batch_sequences: 8 grad_bucket_bytes: 25000000"));
  GpuProgram prog(job, 0, 1);
  const double grad_bytes = job->dense_grad_params(0) * 2;             // bf16 gradients
  EXPECT_NEAR(sum_bytes(prog, "dp_grad_allreduce"), grad_bytes, 2.0);  // buckets cover the gradient exactly
  EXPECT_NEAR(ring_traffic(prog, Phase::kGradSync), 2.0 * (dp - 1) / dp * grad_bytes, 4.0);
  // Bucket count: ceil(gradient bytes / bucket size).
  std::size_t buckets = 0;
  for (const Op& o : all_ops(prog)) buckets += o.name == "dp_grad_allreduce";
  EXPECT_EQ(buckets, static_cast<std::size_t>(std::ceil(grad_bytes / 25e6)));
  // The gradient is this GPU's TP shard of all parameters.
  EXPECT_NEAR(job->dense_grad_params(0) * 2 / count_params(job->shape()).total(job->shape().layers), 1.0,
              0.01);
}

TEST(DataParallel, ZeroStagesMoveTheExpectedBytes) {
  const std::string train = "global_batch_sequences: 8 grad_reduce_fp32: true";
  const auto z0 = testing::make_job(testing::dense_spec_text("data_parallel: 4 zero_stage: 0", train));
  const auto z1 = testing::make_job(testing::dense_spec_text("data_parallel: 4 zero_stage: 1", train));
  const auto z2 = testing::make_job(testing::dense_spec_text("data_parallel: 4 zero_stage: 2", train));
  const auto z3 = testing::make_job(testing::dense_spec_text("data_parallel: 4 zero_stage: 3", train));
  const double params = z0->dense_grad_params(0);
  const double n = 4;
  // ZeRO-0: all-reduce of fp32 grads. ZeRO-1/2: reduce-scatter of fp32 grads + all-gather of bf16 params.
  EXPECT_NEAR(sum_bytes(GpuProgram(z0, 0), "dp_grad_allreduce"), params * 4, 2);
  for (const auto& z : {z1, z2}) {
    GpuProgram prog(z, 0);
    EXPECT_NEAR(sum_bytes(prog, "dp_grad_reducescatter"), params * 4, 2);
    EXPECT_NEAR(sum_bytes(prog, "dp_param_allgather"), params * 2, 2);
    EXPECT_NEAR(ring_traffic(prog, Phase::kGradSync), (n - 1) / n * params * 4, 4);
  }
  // ZeRO-3: per micro-batch, every layer's parameters are gathered for forward and backward and its
  // gradients reduce-scattered; embedding/head go through the step-end path.
  GpuProgram p3(z3, 0);
  const double m = z3->microbatches(), layers = z3->shape().layers;
  const double layer = z3->layer_ops().dense_layer_params_per_gpu;
  EXPECT_NEAR(sum_bytes(p3, "zero3_param_allgather"), 2 * m * layers * layer * 2, 2 * m * layers);
  EXPECT_NEAR(sum_bytes(p3, "zero3_grad_reducescatter"), m * layers * layer * 2, m * layers);
  EXPECT_NEAR(sum_bytes(p3, "dp_grad_reducescatter"), (params - layers * layer) * 4, 2);
  // Optimizer state is sharded from stage 1 on: the optimizer touches 1/n of the parameters.
  double opt0 = 0, opt1 = 0;
  for (const Op& o : all_ops(GpuProgram(z0, 0))) opt0 += o.name == "optimizer_step" ? o.bytes : 0;
  for (const Op& o : all_ops(GpuProgram(z1, 0))) opt1 += o.name == "optimizer_step" ? o.bytes : 0;
  EXPECT_NEAR(opt1 / opt0, 1 / n, 1e-9);
}

// The optimizer step's HBM bytes per owned parameter are Megatron-LM's mixed-precision passes (job.cpp):
// fp32 main-gradient copy (read 2 + write 4, none with fp32 gradients), FP16's unscale (8), gradient norm
// (4), Adam (28), main-to-model weight copy (4 + 2).
TEST(Optimizer, StepBytesFollowTheMixedPrecisionPasses) {
  const auto bytes_per_param = [](const std::string& dtype, const std::string& training) {
    std::string text = testing::dense_spec_text("data_parallel: 1", training);
    text.replace(text.find("BF16"), 4, dtype);
    const auto job = testing::make_job(text);
    double bytes = 0;
    for (const Op& o : all_ops(GpuProgram(job, 0))) bytes += o.name == "optimizer_step" ? o.bytes : 0;
    return bytes / job->dense_grad_params(0);
  };
  EXPECT_NEAR(bytes_per_param("FP16", "global_batch_sequences: 2"), 6 + 8 + 4 + 28 + 6, 1e-9);
  EXPECT_NEAR(bytes_per_param("BF16", "global_batch_sequences: 2"), 6 + 4 + 28 + 6, 1e-9);
  EXPECT_NEAR(bytes_per_param("BF16", "global_batch_sequences: 2 grad_reduce_fp32: true"), 4 + 28 + 6, 1e-9);
  EXPECT_NEAR(bytes_per_param("BF16", "global_batch_sequences: 2 optimizer: SGD"), 6 + 4 + 20 + 6, 1e-9);
}

TEST(Groups, ArithmeticGroupsPartitionTheRanks) {
  const auto job = testing::make_job(testing::moe_spec_text(
      "tensor_parallel: 2 context_parallel: 2 data_parallel: 4 expert_parallel: 2 pipeline_parallel: 2",
      "global_batch_sequences: 8"));
  for (GroupKind kind : {GroupKind::kTensor, GroupKind::kContext, GroupKind::kDataContext, GroupKind::kExpert,
                         GroupKind::kExpertDataContext, GroupKind::kEmbedding}) {
    for (std::uint32_t r = 0; r < job->world_size(); ++r) {
      const GroupDesc g = job->group(r, kind);
      ASSERT_LT(g.index_of(r), g.size()) << to_string(kind) << " rank " << r;
      for (std::uint32_t i = 0; i < g.size(); ++i) {
        // Every member computes the same group.
        const std::uint32_t m = g.member(i);
        if (kind == GroupKind::kEmbedding && job->stage_of(r) != 0 && job->stage_of(r) != 1) continue;
        EXPECT_EQ(job->group(m, kind), g) << to_string(kind) << " rank " << r << " member " << m;
        EXPECT_EQ(g.index_of(m), i);
      }
    }
  }
  EXPECT_EQ(job->group(0, GroupKind::kExpertDataContext).size(), 2u * 4 / 2);  // CP x DP / EP
  EXPECT_EQ(job->group(5, GroupKind::kTensor), (GroupDesc{4, 1, 2, 0, 1}));
}

}  // namespace
}  // namespace warpsim::workload
