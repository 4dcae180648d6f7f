// The workload-to-cluster adapter: for several job shapes (dense, sequence parallel, context parallel,
// MoE with expert parallelism, ZeRO-3, interleaved 1F1B) every GPU's expanded program has its stated
// length, walks the workload ops in order, every send has exactly one matching receive over the whole
// cluster, and each collective expands into the op and byte counts of its ring/pairwise algorithm.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "experiment/spec/experiment_spec.hpp"
#include "experiment/spec/job_spec.hpp"
#include "models/training/training_program.hpp"
#include "models/workload/gpu_program.hpp"
#include "models/workload/moe_routing.hpp"

namespace warpsim::training {
namespace {

using workload::CollectiveKind;

spec::JobSpec small_job() {
  return spec::load_experiment_spec(std::string(WARPSIM_TRAINING_TEST_DIR) + "/small.textproto").job();
}

// A job's parameters from an edited spec, as the loader gives them (normalized and validated); the world
// size follows the degrees.
workload::JobParams checked_params(spec::JobSpec js) {
  js.set_world_size_gpus(0);
  js = spec::normalized(js);
  spec::validate_job_spec(js);
  return spec::to_job_params(js);
}

// Every message of one program counted +1 and of another -1, by (from, to, tag, bytes): all zero when the two
// send the same messages.
class MessageBalance {
 public:
  void count(std::uint32_t gpu, const cluster::GpuOp& op, long sign) {
    if (op.kind == cluster::OpKind::kSend) balance_[{gpu, op.peer, op.tag, op.bytes}] += sign;
    if (op.kind == cluster::OpKind::kRecv) balance_[{op.peer, gpu, op.tag, op.bytes}] -= sign;
  }
  void expect_even(const char* what) const {
    for (const auto& [key, b] : balance_) {
      ASSERT_EQ(b, 0) << "message " << std::get<0>(key) << " -> " << std::get<1>(key) << " tag "
                      << std::get<2>(key) << " differs " << what;
    }
  }

 private:
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint64_t>, long> balance_;
};

// The jobs of `params` before and after `change`: the two sides of an A/B check of one option.
std::pair<std::shared_ptr<const workload::Job>, std::shared_ptr<const workload::Job>> job_pair(
    workload::JobParams params, void (*change)(workload::JobParams&)) {
  auto before = std::make_shared<const workload::Job>(params);
  change(params);
  return {std::move(before), std::make_shared<const workload::Job>(params)};
}

struct Variant {
  std::string name;
  void (*edit)(spec::JobSpec&);
  const char* expected_collective;  // a collective kind this shape must produce
};

const Variant kVariants[] = {
    {"dense", [](spec::JobSpec&) {}, "all_reduce"},
    {"sequence_parallel", [](spec::JobSpec& j) { j.mutable_parallelism()->set_sequence_parallel(true); },
     "reduce_scatter"},
    {"context_parallel",
     [](spec::JobSpec& j) {
       j.mutable_parallelism()->set_context_parallel(2);
       j.mutable_parallelism()->set_data_parallel(2);
       j.mutable_training()->set_global_batch_sequences(8);
     },
     "ring_exchange"},
    {"moe_expert_parallel",
     [](spec::JobSpec& j) {
       j.mutable_model()->set_num_experts(4);
       j.mutable_model()->set_moe_top_k(2);
       j.mutable_parallelism()->set_expert_parallel(2);
     },
     "all_to_all"},
    {"zero3", [](spec::JobSpec& j) { j.mutable_parallelism()->set_zero_stage(3); }, "all_gather"},
    {"interleaved",
     [](spec::JobSpec& j) {
       j.mutable_parallelism()->set_pipeline_schedule(spec::JobParallelism::INTERLEAVED_1F1B);
       j.mutable_parallelism()->set_virtual_stages_per_rank(2);
     },
     "all_reduce"},
    {"pipeline_scatter_gather",
     [](spec::JobSpec& j) { j.mutable_parallelism()->set_pipeline_scatter_gather(true); }, "all_gather"},
    {"pipeline_p2p_sync", [](spec::JobSpec& j) { j.mutable_parallelism()->set_pipeline_p2p_sync(true); },
     "all_reduce"},
};

class TrainingProgramTest : public ::testing::TestWithParam<Variant> {};

TEST_P(TrainingProgramTest, ExpansionIsCompleteAndMatched) {
  spec::JobSpec js = small_job();
  GetParam().edit(js);
  js.set_world_size_gpus(0);
  js = spec::normalized(js);
  spec::validate_job_spec(js);
  // Without NCCL's cost and the reductions' traffic (the schedules' op and byte counts are checked), then
  // with them (the default: every message still matched, the counts as expanded_count says).
  for (const bool cost : {false, true}) {
    SCOPED_TRACE(cost ? "with NCCL's cost" : "without NCCL's cost");
    workload::JobParams params = spec::to_job_params(js);
    // Stream 0 alone carries every op here (the tests below check what moves to stream 1).
    params.training.zero3_prefetch = false;
    params.training.cp_comm_overlap = false;
    if (!cost) {
      params.training.nccl_protocol = "none";
      params.training.free_reductions = true;
    }
    const auto job = std::make_shared<const workload::Job>(params);
    const CollectiveOptions options = collective_options(*job);
    EXPECT_EQ(options.nccl, cost);
    EXPECT_EQ(options.reduce_bytes_per_s > 0, cost);
    constexpr std::uint32_t kSteps = 2, kTargets = 2;
    const TrainingProgram prog(job, kSteps, kTargets);
    const std::uint32_t world = job->world_size();
    EXPECT_LE(prog.distinct_tables(), job->degrees().pp);
    EXPECT_FALSE(prog.op(world, 0).has_value());  // GPUs beyond the job are idle

    // (src, dst, tag, bytes) -> sends minus receives.
    std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint64_t>, long> balance;
    std::map<std::string, long> collectives_checked;
    std::uint64_t storage_writes = 0, storage_reads = 0;
    for (std::uint32_t g = 0; g < world; ++g) {
      const workload::GpuProgram wl(job, g, kSteps);
      std::uint64_t i = 0;
      std::uint64_t expected_workload = 0;  // next workload op with a non-empty expansion
      while (auto op = prog.op(g, i)) {
        const auto src = prog.source(g, i);
        ASSERT_TRUE(src.has_value());
        // Sources walk the workload ops in order, each sub-op once, skipping empty expansions.
        if (src->sub == 0) {
          ASSERT_GE(src->workload_index, expected_workload);
          for (std::uint64_t w = expected_workload; w < src->workload_index; ++w) {
            ASSERT_EQ(expanded_count(wl.op(w), kTargets, 0, options), 0u)
                << "gpu " << g << " skipped op " << w;
          }
          const workload::Op w = wl.op(src->workload_index);
          const std::uint64_t n_ops = expanded_count(w, kTargets, 0, options);
          ASSERT_GT(n_ops, 0u);
          if (!cost && w.kind == workload::OpKind::kCollective) {
            const std::uint32_t n = w.group.size();
            const std::uint64_t expect_ops = w.collective == CollectiveKind::kAllReduce  ? 6ull * (n - 1)
                                             : w.collective == CollectiveKind::kAllToAll ? 2ull * (n - 1) + 1
                                                                                         : 3ull * (n - 1);
            ASSERT_EQ(n_ops, expect_ops) << workload::to_string(w.collective) << " n=" << n;
            double sent = 0;
            for (std::uint64_t k = 0; k < n_ops; ++k) {
              const auto c = prog.op(g, i + k);
              ASSERT_TRUE(c.has_value());
              if (c->kind == cluster::OpKind::kSend) sent += static_cast<double>(c->bytes);
            }
            const double formula =
                workload::ring_bytes_sent_per_member(w.collective, n, double(w.comm_bytes));
            ASSERT_NEAR(sent, formula, 2.0 * n + 1e-9 * formula)
                << workload::to_string(w.collective) << " n=" << n;
            ++collectives_checked[std::string(workload::to_string(w.collective))];
          }
          expected_workload = src->workload_index + 1;
        }
        switch (op->kind) {
          case cluster::OpKind::kSend:
            ++balance[{g, op->peer, op->tag, op->bytes}];
            break;
          case cluster::OpKind::kRecv:
            --balance[{op->peer, g, op->tag, op->bytes}];
            break;
          case cluster::OpKind::kStorage:
            EXPECT_LT(op->peer, kTargets);
            ++(op->tag == 1u ? storage_writes : storage_reads);
            break;
          default:
            break;
        }
        ++i;
      }
      EXPECT_EQ(i, prog.size(g)) << "gpu " << g;
      EXPECT_EQ(expected_workload, wl.size()) << "gpu " << g << ": not every workload op was expanded";
    }
    for (const auto& [key, b] : balance) {
      ASSERT_EQ(b, 0) << "unmatched message " << std::get<0>(key) << " -> " << std::get<1>(key) << " tag "
                      << std::get<2>(key) << " bytes " << std::get<3>(key);
    }
    EXPECT_GT(balance.size(), 0u);
    if (!cost) {
      EXPECT_GT(collectives_checked["all_reduce"], 0) << "no all-reduce in the job";
      EXPECT_GT(collectives_checked[GetParam().expected_collective], 0)
          << "no " << GetParam().expected_collective << " in the job";
    }
    // small.textproto checkpoints every 2 steps: one write per GPU over 2 steps.
    EXPECT_EQ(storage_writes, world);
    // Data-loader reads: every GPU of the first and last stage, once per step.
    const std::uint32_t loaders = job->degrees().pp > 1 ? 2 : 1;
    EXPECT_EQ(storage_reads, std::uint64_t{kSteps} * loaders * job->pipeline_stride());
  }
}

// training.overlap_grad_reduce moves the data-parallel/expert-data gradient buckets to stream 1 and changes
// nothing else: the same messages over both streams as without overlap; stream 1 has only communication and
// WaitStreams; each bucket waits on stream 1 for a stream-0 op that comes before the stream-0 WaitStream for
// that bucket (so neither stream can wait for the other in a cycle); every WaitStream names an existing op.
TEST_P(TrainingProgramTest, OverlapMovesGradBucketsToTheCommStream) {
  spec::JobSpec js = small_job();
  GetParam().edit(js);
  workload::JobParams params = checked_params(js);
  // This test is about the gradient buckets: no other item on the communication stream.
  params.training.cp_comm_overlap = false;
  params.training.zero3_prefetch = false;
  const auto [plain_job, job] =
      job_pair(params, [](workload::JobParams& p) { p.training.overlap_grad_reduce = true; });
  constexpr std::uint32_t kSteps = 2, kTargets = 2;
  const TrainingProgram plain(plain_job, kSteps, kTargets), prog(job, kSteps, kTargets);
  EXPECT_FALSE(plain.has_comm_stream());
  EXPECT_TRUE(prog.has_comm_stream());
  MessageBalance balance;  // plain minus overlapped
  std::uint64_t buckets = 0;
  for (std::uint32_t g = 0; g < job->world_size(); ++g) {
    for (std::uint64_t i = 0; auto op = plain.op(g, i); ++i) balance.count(g, *op, +1);
    std::vector<cluster::GpuOp> s0, s1;
    for (std::uint64_t i = 0; auto op = prog.op(g, i); ++i) s0.push_back(*op);
    for (std::uint64_t i = 0; auto op = prog.comm_op(g, i); ++i) s1.push_back(*op);
    for (const auto& op : s0) balance.count(g, op, -1);
    for (const auto& op : s1) balance.count(g, op, -1);
    // Stream 1's end -> the stream-0 op that waits for it; stream 1's WaitStreams -> their stream-0 target.
    std::map<std::uint64_t, std::uint64_t> waited_by;
    for (std::uint64_t i = 0; i < s0.size(); ++i) {
      if (s0[i].kind != cluster::OpKind::kWaitStream) continue;
      ASSERT_LT(s0[i].bytes, s1.size()) << "gpu " << g;
      ASSERT_EQ(s1[s0[i].bytes].kind, cluster::OpKind::kWait) << "gpu " << g;
      waited_by[s0[i].bytes] = i;
    }
    for (std::uint64_t j = 0; j < s1.size(); ++j) {
      const auto& op = s1[j];
      ASSERT_NE(op.kind, cluster::OpKind::kCompute);
      ASSERT_NE(op.kind, cluster::OpKind::kStorage);
      if (op.kind != cluster::OpKind::kWaitStream) continue;
      ++buckets;
      ASSERT_LT(op.bytes, s0.size()) << "gpu " << g;
      // The bucket's end: the last op before the next WaitStream (or the stream's end).
      std::uint64_t end = j + 1;
      while (end < s1.size() && s1[end].kind != cluster::OpKind::kWaitStream) ++end;
      ASSERT_TRUE(waited_by.count(end - 1)) << "gpu " << g << ": nothing on stream 0 waits for bucket " << j;
      EXPECT_LT(op.bytes, waited_by[end - 1]) << "gpu " << g << ": bucket " << j << " waits for a later op";
    }
  }
  balance.expect_even("with overlap");
  EXPECT_GT(buckets, 0u);
}

// `prog` moved some communication of `serial` to the communication stream: both send the same messages,
// every compute op keeps its total time (chunks add up to the whole), stream 1 holds only communication and
// WaitStreams, and every stream-0 WaitStream waits for a Wait there. Returns the stream-0 WaitStreams with
// `label`'s class.
std::uint64_t expect_moved_to_comm_stream(const TrainingProgram& serial, const TrainingProgram& prog,
                                          std::uint32_t world, CommClass label) {
  EXPECT_TRUE(prog.has_comm_stream());
  EXPECT_FALSE(serial.has_comm_stream());
  MessageBalance balance;  // serial minus moved
  std::uint64_t waits = 0;
  for (std::uint32_t g = 0; g < world; ++g) {
    SimTime serial_compute = 0, compute = 0;
    for (std::uint64_t i = 0; auto op = serial.op(g, i); ++i) {
      balance.count(g, *op, +1);
      if (op->kind == cluster::OpKind::kCompute) serial_compute += op->duration_ps;
    }
    std::vector<cluster::GpuOp> s0, s1;
    for (std::uint64_t i = 0; auto op = prog.op(g, i); ++i) s0.push_back(*op);
    for (std::uint64_t i = 0; auto op = prog.comm_op(g, i); ++i) s1.push_back(*op);
    EXPECT_FALSE(s1.empty()) << "gpu " << g;
    for (const auto& op : s0) {
      balance.count(g, op, -1);
      if (op.kind == cluster::OpKind::kCompute) compute += op.duration_ps;
      if (op.kind != cluster::OpKind::kWaitStream) continue;
      EXPECT_LT(op.bytes, s1.size()) << "gpu " << g;
      if (op.bytes < s1.size()) {
        EXPECT_EQ(s1[op.bytes].kind, cluster::OpKind::kWait) << "gpu " << g;
      }
      if (op.wait_label == wait_label(label)) ++waits;
    }
    for (const auto& op : s1) {
      balance.count(g, op, -1);
      EXPECT_NE(op.kind, cluster::OpKind::kCompute) << "gpu " << g;
      EXPECT_NE(op.kind, cluster::OpKind::kStorage) << "gpu " << g;
    }
    EXPECT_EQ(compute, serial_compute) << "gpu " << g;  // durations before any SM contention
  }
  balance.expect_even("once moved to the communication stream");
  return waits;
}

// Context parallelism's KV ring overlapped with the fused attention (the default).
TEST(TrainingProgram, CpOverlapMovesTheKvRingToTheCommStream) {
  spec::JobSpec js = small_job();
  js.mutable_parallelism()->set_context_parallel(2);
  js.mutable_parallelism()->set_data_parallel(2);
  js.mutable_training()->set_global_batch_sequences(8);
  js.mutable_model()->set_fused_attention(true);
  const auto [job, serial_job] =
      job_pair(checked_params(js), [](workload::JobParams& p) { p.training.cp_comm_overlap = false; });
  const TrainingProgram prog(job, 2, 2), serial(serial_job, 2, 2);  // 2 steps, 2 storage targets
  EXPECT_GT(expect_moved_to_comm_stream(serial, prog, job->world_size(), CommClass::kContext), 0u);
}

// ZeRO-3's parameter all-gathers one layer ahead (the default): one stream-0 WaitStream per gather.
TEST(TrainingProgram, Zero3PrefetchMovesTheParameterGathersToTheCommStream) {
  spec::JobSpec js = small_job();
  js.mutable_parallelism()->set_zero_stage(3);
  const auto [job, serial_job] =
      job_pair(checked_params(js), [](workload::JobParams& p) { p.training.zero3_prefetch = false; });
  const TrainingProgram prog(job, 2, 2), serial(serial_job, 2, 2);
  std::uint64_t gathers = 0;
  for (std::uint64_t i = 0, n = workload::GpuProgram(job, 0, 2).size(); i < n; ++i) {
    const workload::Op op = workload::GpuProgram(job, 0, 2).op(i);
    if (op.name == "zero3_param_allgather") ++gathers;
  }
  ASSERT_GT(gathers, 0u);
  // GPU 0's data-labelled waits: one per gather (the job has no other data-parallel item on stream 1).
  EXPECT_GE(expect_moved_to_comm_stream(serial, prog, job->world_size(), CommClass::kData), gathers);
}

INSTANTIATE_TEST_SUITE_P(Shapes, TrainingProgramTest, ::testing::ValuesIn(kVariants),
                         [](const auto& info) { return info.param.name; });

TEST(TrainingProgram, CountsFollowTheAlgorithms) {
  workload::Op op;
  op.kind = workload::OpKind::kCollective;
  op.group.inner_size = 8;
  op.collective = CollectiveKind::kAllReduce;
  EXPECT_EQ(expanded_count(op, 0), 6u * 7);
  op.collective = CollectiveKind::kAllGather;
  EXPECT_EQ(expanded_count(op, 0), 3u * 7);
  op.collective = CollectiveKind::kReduceScatter;
  EXPECT_EQ(expanded_count(op, 0), 3u * 7);
  op.collective = CollectiveKind::kAllToAll;
  EXPECT_EQ(expanded_count(op, 0), 2u * 7 + 1);
  op.group.inner_size = 1;
  EXPECT_EQ(expanded_count(op, 0), 0u);
  op.kind = workload::OpKind::kRecv;
  EXPECT_EQ(expanded_count(op, 0), 2u);
  op.kind = workload::OpKind::kCheckpointWrite;
  EXPECT_EQ(expanded_count(op, 0), 0u);
  EXPECT_EQ(expanded_count(op, 4), 2u);
}

// NCCL's rail-aligned rings in the training expansion: a data-parallel group of TP=4 jobs on 8-GPU nodes
// holds 2 members per node; each runs 2 channels, every inter-node hop joins GPUs of the same rail (local
// index), every send has its receive, and each member sends 2(n-1)/n of the buffer, as the flat ring does.
TEST(TrainingProgram, RailAlignedRingsStayOnTheirRail) {
  workload::Op op;
  op.kind = workload::OpKind::kCollective;
  op.collective = CollectiveKind::kAllReduce;
  op.group_kind = workload::GroupKind::kDataContext;
  op.group.first = 1;  // TP rank 1
  op.group.inner_stride = 4;
  op.group.inner_size = 16;  // 8 nodes x 2 members
  op.comm_bytes = 64ull << 20;
  constexpr std::uint32_t kGpusPerNode = 8;
  EXPECT_EQ(rail_members_per_node(op.group, kGpusPerNode), 2u);
  EXPECT_EQ(rail_members_per_node(op.group, 0), 1u);  // no cluster: the flat ring
  CollectiveOptions options;
  options.gpus_per_node = kGpusPerNode;
  const std::uint32_t n = op.group.size();
  const std::uint64_t steps = 2ull * (n - 1);
  EXPECT_EQ(expanded_count(op, 0, 0, options), (2 * 2 + 1) * steps);
  EXPECT_EQ(expanded_count(op, 0, 0, CollectiveOptions{}), 3 * steps);
  const workload::ComputeModel compute(workload::find_gpu_profile("H100-SXM"));
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint64_t>, int> balance;
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t gpu = op.group.member(i);
    std::uint64_t sent = 0;
    for (std::uint64_t sub = 0; sub < expanded_count(op, 0, 0, options); ++sub) {
      const cluster::GpuOp g = expand(op, gpu, sub, compute, 0, options);
      if (g.kind == cluster::OpKind::kSend) {
        sent += g.bytes;
        if (g.peer / kGpusPerNode != gpu / kGpusPerNode) {
          EXPECT_EQ(g.peer % kGpusPerNode, gpu % kGpusPerNode)
              << "cross-rail hop " << gpu << " -> " << g.peer;
        }
        ++balance[{gpu, g.peer, g.tag, g.bytes}];
      } else if (g.kind == cluster::OpKind::kRecv) {
        --balance[{g.peer, gpu, g.tag, g.bytes}];
      }
    }
    EXPECT_NEAR(static_cast<double>(sent), 2.0 * (n - 1) / n * static_cast<double>(op.comm_bytes),
                1e-6 * static_cast<double>(op.comm_bytes));
  }
  for (const auto& [key, count] : balance) EXPECT_EQ(count, 0);

  // Where the layout is not one block of members per node, the flat ring stays.
  workload::GroupDesc one_per_node{0, 8, 16, 0, 1};  // TP=8: one member per node, already on its rail
  EXPECT_EQ(rail_members_per_node(one_per_node, kGpusPerNode), 1u);
  workload::GroupDesc one_node{0, 1, 8, 0, 1};  // inside one node: NVLink only
  EXPECT_EQ(rail_members_per_node(one_node, kGpusPerNode), 1u);
  workload::GroupDesc uneven{0, 3, 16, 0, 1};  // stride 3 does not divide 8
  EXPECT_EQ(rail_members_per_node(uneven, kGpusPerNode), 1u);
}

// Synchronous pipeline p2p (Megatron-LM 2021): every pipeline send is followed by a Wait labelled pipeline.
TEST(TrainingProgram, SynchronousPipelineSendsWait) {
  workload::Op op;
  op.kind = workload::OpKind::kSend;
  op.peer = 3;
  op.comm_bytes = 1000;
  CollectiveOptions sync;
  sync.sync_p2p = true;
  EXPECT_EQ(expanded_count(op, 0), 1u);
  ASSERT_EQ(expanded_count(op, 0, 0, sync), 2u);
  auto job_spec = small_job();
  job_spec.mutable_parallelism()->set_pipeline_p2p_sync(true);
  const auto job = std::make_shared<const workload::Job>(spec::to_job_params(job_spec));
  ASSERT_TRUE(job->degrees().pp_sync);
  EXPECT_TRUE(collective_options(*job).sync_p2p);
  EXPECT_EQ(expand(op, 0, 0, job->compute(), 0, sync).kind, cluster::OpKind::kSend);
  const cluster::GpuOp w = expand(op, 0, 1, job->compute(), 0, sync);
  EXPECT_EQ(w.kind, cluster::OpKind::kWait);
  EXPECT_EQ(w.wait_label, wait_label(CommClass::kPipeline));
  // Every send of a stage's program gets its Wait: the program grows by exactly the number of sends.
  const TrainingProgram plain(std::make_shared<const workload::Job>(spec::to_job_params(small_job())), 1, 0);
  const TrainingProgram synced(job, 1, 0);
  const workload::GpuProgram prog(job, 0, 1);
  std::uint64_t sends = 0;
  for (std::uint64_t i = 0; i < prog.size(); ++i) sends += prog.op(i).kind == workload::OpKind::kSend;
  EXPECT_GT(sends, 0u);
  EXPECT_EQ(synced.size(0), plain.size(0) + sends);
}

// The data loader: the first and last stage prefetch the next step's token ids / labels (int32 per token of
// their micro-batches) at the end of each step, as one asynchronous storage read (no Wait of its own).
TEST(TrainingProgram, DataLoaderReadsOnTheFirstAndLastStage) {
  const auto job = std::make_shared<const workload::Job>(spec::to_job_params(small_job()));
  const std::uint64_t expect_bytes = std::uint64_t{job->microbatches()} * job->micro_batch_sequences() *
                                     job->shape().seq / job->degrees().cp * 4;
  const std::uint32_t pp = job->degrees().pp;
  ASSERT_GE(pp, 2u);
  for (std::uint32_t stage = 0; stage < pp; ++stage) {
    const workload::GpuProgram prog(job, stage * job->pipeline_stride(), 1);
    std::uint64_t reads = 0;
    for (std::uint64_t i = 0; i < prog.size(); ++i) {
      const workload::Op op = prog.op(i);
      if (op.kind != workload::OpKind::kDataRead) continue;
      ++reads;
      EXPECT_EQ(op.comm_bytes, expect_bytes);
      EXPECT_EQ(comm_class(op), CommClass::kDataLoader);
      EXPECT_EQ(expanded_count(op, 0), 0u);
      ASSERT_EQ(expanded_count(op, 4), 1u);
      const cluster::GpuOp g = expand(op, stage * job->pipeline_stride(), 0, job->compute(), 4);
      EXPECT_EQ(g.kind, cluster::OpKind::kStorage);
      EXPECT_EQ(g.tag, 0u);  // a read
      EXPECT_EQ(g.bytes, expect_bytes);
    }
    EXPECT_EQ(reads, stage == 0 || stage == pp - 1 ? 1u : 0u) << "stage " << stage;
  }
}

// Expert all-to-alls against closed forms, on the DeepSeek-V3 example's shape: EP64 = 8 nodes x 8 GPUs, one
// micro-batch's dispatch buffer B = T k h e = 4096 x 8 x 7168 x 2 bytes per GPU.
struct MoeAllToAllCase {
  static constexpr std::uint32_t kL = 8, kN = 8, kN_members = kL * kN;  // members per node, nodes
  static constexpr std::uint64_t kBytes = 4096ull * 8 * 7168 * 2;
  static workload::Op op(std::uint8_t route) {
    workload::Op o;
    o.kind = workload::OpKind::kCollective;
    o.collective = CollectiveKind::kAllToAll;
    o.group_kind = workload::GroupKind::kExpert;
    o.group.first = 128;  // the second stage's first GPU: whole nodes 16..23
    o.group.inner_size = kN_members;
    o.comm_bytes = kBytes;
    o.route = route;
    o.layer = 5;
    o.microbatch = 3;
    return o;
  }
  // Per member (group index): bytes sent and received in each phase (0: NVLink, 1: rail), and whether
  // every Send has its Recv (same pair, tag and bytes).
  struct Traffic {
    std::vector<double> sent[2], received[2];
    bool matched = true;
  };
  static Traffic run(const workload::Op& o, const CollectiveOptions& options) {
    const workload::ComputeModel compute(workload::find_gpu_profile("H800"));
    Traffic t;
    for (auto* v : {&t.sent[0], &t.sent[1], &t.received[0], &t.received[1]}) v->assign(kN_members, 0.0);
    std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint64_t, std::uint64_t>, int> balance;
    for (std::uint32_t i = 0; i < kN_members; ++i) {
      const std::uint32_t gpu = o.group.member(i);
      for (std::uint64_t sub = 0; sub < expanded_count(o, 0, 0, options); ++sub) {
        const cluster::GpuOp g = expand(o, gpu, sub, compute, 0, options);
        if (g.kind != cluster::OpKind::kSend && g.kind != cluster::OpKind::kRecv) continue;
        const int phase = g.peer / kL == gpu / kL ? 0 : 1;
        if (g.kind == cluster::OpKind::kSend) {
          t.sent[phase][i] += static_cast<double>(g.bytes);
          ++balance[{gpu, g.peer, g.tag, g.bytes}];
          // The rail phase only joins GPUs of the same local index (one NIC rail).
          if (phase == 1 && g.peer % kL != gpu % kL) t.matched = false;
        } else {
          t.received[phase][i] += static_cast<double>(g.bytes);
          --balance[{g.peer, gpu, g.tag, g.bytes}];
        }
      }
    }
    for (const auto& [key, count] : balance) t.matched = t.matched && count == 0;
    return t;
  }
};

// Balanced hierarchical all-to-all: phase 1 sends each of the L-1 local peers everything bound for its local
// index on all N nodes (N B/n = B/L), phase 2 sends each of the N-1 rail peers what its node gathered for it
// (L B/n = B/N): (L-1)/L B over NVLink and (N-1)/N B over the rail per GPU, 2(L-1)+1 + 2(N-1)+1 ops.
TEST(MoeAllToAllTest, HierarchicalPhasesMoveClosedFormBytes) {
  using C = MoeAllToAllCase;
  const workload::Op o = C::op(workload::kRouteDispatch);
  CollectiveOptions options;
  options.gpus_per_node = 8;
  options.hierarchical_all_to_all = true;
  EXPECT_EQ(hierarchical_all_to_all_members(o, options), C::kL);
  EXPECT_EQ(expanded_count(o, 0, 0, options), 2ull * (C::kL - 1) + 1 + 2ull * (C::kN - 1) + 1);
  const double B = static_cast<double>(C::kBytes);
  const C::Traffic t = C::run(o, options);
  EXPECT_TRUE(t.matched);
  for (std::uint32_t i = 0; i < C::kN_members; ++i) {
    EXPECT_EQ(t.sent[0][i], (C::kL - 1) * (B / C::kL)) << i;  // 7 x 58720256, exact
    EXPECT_EQ(t.sent[1][i], (C::kN - 1) * (B / C::kN)) << i;
    EXPECT_EQ(t.received[0][i], t.sent[0][i]) << i;
    EXPECT_EQ(t.received[1][i], t.sent[1][i]) << i;
  }
  // The flat all-to-all (no hierarchy) sends (n-1)/n B per GPU, 7 of the 63 messages inside the node.
  options.hierarchical_all_to_all = false;
  EXPECT_EQ(expanded_count(o, 0, 0, options), 2ull * (C::kN_members - 1) + 1);
  const C::Traffic flat = C::run(o, options);
  for (std::uint32_t i = 0; i < C::kN_members; ++i) {
    EXPECT_EQ(flat.sent[0][i], (C::kL - 1) * (B / C::kN_members)) << i;
    EXPECT_EQ(flat.sent[1][i], (C::kN_members - C::kL) * (B / C::kN_members)) << i;
  }
}

// Skewed routing (model.moe_routing_skew): member m's experts receive n B share(m) of the group's dispatch
// (its own pairs included), so the rail phase delivers it (N-1) L B share(m); the rail bytes of the whole
// group stay (N-1)/N n B as in the balanced case (conserved), and NVLink bytes follow the local indices'
// summed shares. The combine mirrors it: member m forwards to each other node's GPU on its rail what its
// node's experts computed for that GPU, B times the node's summed shares.
// Each message rounds to whole bytes, so the sums hold to a byte per message.
TEST(MoeAllToAllTest, SkewedRoutingBytesFollowTheSharesAndAreConserved) {
  using C = MoeAllToAllCase;
  const workload::MoeRouting routing(256, C::kN_members, 8, 1.0, 11);
  ASSERT_FALSE(routing.balanced());
  CollectiveOptions options;
  options.gpus_per_node = 8;
  options.hierarchical_all_to_all = true;
  options.routing = &routing;
  const double B = static_cast<double>(C::kBytes), n = C::kN_members;
  const workload::Op dispatch = C::op(workload::kRouteDispatch);
  const workload::RouteKey key{dispatch.layer, dispatch.step, dispatch.microbatch, dispatch.group.first};
  const C::Traffic t = C::run(dispatch, options);
  EXPECT_TRUE(t.matched);
  constexpr double kRound = C::kN;  // at most N-1 rail messages of <= 0.5 byte rounding each
  double rail = 0, nvlink = 0, share_sum = 0, max_share = 0;
  for (std::uint32_t m = 0; m < C::kN_members; ++m) {
    const double s = routing.share(key, m);
    share_sum += s;
    max_share = std::max(max_share, s);
    EXPECT_NEAR(t.received[1][m], (C::kN - 1) * C::kL * B * s, kRound) << m;
    // Phase 1 leaves each GPU with B times the shares of the other local indices' members on all nodes.
    double other_local = 0;
    for (std::uint32_t x = 0; x < C::kN_members; ++x)
      if (x % C::kL != m % C::kL) other_local += routing.share(key, x);
    EXPECT_NEAR(t.sent[0][m], B * other_local, kRound) << m;
    rail += t.received[1][m];
    nvlink += t.sent[0][m];
  }
  EXPECT_NEAR(share_sum, 1.0, 1e-12);
  EXPECT_GT(max_share, 1.5 / n);                             // the draw is really skewed
  EXPECT_NEAR(rail, (C::kN - 1) * C::kL * B, n * kRound);    // = (N-1)/N n B, as balanced
  EXPECT_NEAR(nvlink, (C::kL - 1) * C::kN * B, n * kRound);  // = (L-1)/L n B, as balanced
  const workload::Op combine = C::op(workload::kRouteCombine);
  const C::Traffic back = C::run(combine, options);
  EXPECT_TRUE(back.matched);
  double back_rail = 0;
  for (std::uint32_t m = 0; m < C::kN_members; ++m) {
    double node_share = 0;  // the shares of m's node: what its experts send back to each other node
    for (std::uint32_t y = 0; y < C::kL; ++y) node_share += routing.share(key, m / C::kL * C::kL + y);
    EXPECT_NEAR(back.sent[1][m], (C::kN - 1) * B * node_share, kRound) << m;
    back_rail += back.sent[1][m];
  }
  EXPECT_NEAR(back_rail, rail, 2 * n * kRound);
}

}  // namespace
}  // namespace warpsim::training
