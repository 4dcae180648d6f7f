// NCCL's per-call cost and the reductions' HBM traffic in the training adapter (training_program.hpp;
// docs/collectives.md, "Launch and per-step latency, protocols" and "Memory traffic of reductions"): one
// training collective, simulated alone on the cluster model, takes its wire time plus NCCL's latency beyond
// the modelled wire, by tuning.cc's formula; a ring whose reductions are slower than its transfers takes a
// reduction per reduce step, and one whose reductions are faster is unchanged.
#include <gtest/gtest.h>

#include <memory>
#include <optional>

#include "models/training/training_program.hpp"
#include "models/workload/compute_model.hpp"
#include "models/workload/gpu_profile.hpp"
#include "tests/models/cluster/sequential_cluster_run.hpp"

namespace warpsim::training {
namespace {

using warpsim::kPicosPerNano;
using workload::CollectiveKind;

// Every member of the op's group runs the op's expansion, nothing else.
class OneOpProgram final : public cluster::GpuProgram {
 public:
  OneOpProgram(workload::Op op, CollectiveOptions options)
      : op_(op), options_(std::move(options)), compute_(workload::find_gpu_profile("A100-80GB")) {}
  std::optional<cluster::GpuOp> op(std::uint32_t gpu, std::uint64_t index) const override {
    if (op_.group.index_of(gpu) >= op_.group.size()) return std::nullopt;
    if (index >= expanded_count(op_, 0, 0, options_)) return std::nullopt;
    return expand(op_, gpu, index, compute_, 0, options_);
  }

 private:
  workload::Op op_;
  CollectiveOptions options_;
  workload::ComputeModel compute_;
};

// 2 nodes x 4 GPUs at flow fidelity; NVLink 3600 Gb/s, 200 ns; injection 100 ns.
cluster::ClusterParams fabric_params() {
  return cluster::flat(2, 4, 8, 1.0, cluster::Fidelity::kFlow);
}

// A tensor-parallel all-reduce over the 4 GPUs of node 0.
workload::Op tp_all_reduce(std::uint64_t bytes) {
  workload::Op op;
  op.kind = workload::OpKind::kCollective;
  op.collective = CollectiveKind::kAllReduce;
  op.group_kind = workload::GroupKind::kTensor;
  op.group = {0, 1, 4, 0, 1};
  op.comm_bytes = bytes;
  return op;
}

CollectiveOptions with_nccl(const cluster::ClusterParams& p, std::optional<cluster::Protocol> protocol) {
  CollectiveOptions o;
  o.gpus_per_node = p.gpus_per_node;
  o.nccl = true;
  o.nccl_protocol = protocol;
  o.fabric = cluster::nccl_fabric(p);
  return o;
}

SimTime run_alone(const cluster::ClusterParams& p, const workload::Op& op, const CollectiveOptions& o) {
  const cluster::Ran r = cluster::run(p, std::make_shared<OneOpProgram>(op, o));
  EXPECT_TRUE(r.all_done);
  return r.finish;
}

// Simple forced: NCCL's ring all-reduce latency over 4 ranks in one node is base 8.4 us + 2(n-1) = 6 steps x
// 3.4 us (NVLink, ring, Simple) = 28.8 us; the model already simulates each step's wire latency, 2 x 100 ns
// injection + 2 x 200 ns NVLink = 0.6 us, so the program charges 28.8 - 6 x 0.6 = 25.2 us up front, and the
// collective takes exactly that much longer than its wire time.
TEST(NcclCost, TrainingAllReduceTakesWireTimePlusNcclLatency) {
  const cluster::ClusterParams p = fabric_params();
  const workload::Op op = tp_all_reduce(16ull << 20);
  const CollectiveOptions simple = with_nccl(p, cluster::Protocol::kSimple);
  const auto cost = nccl_op_cost(op, 0, simple);
  ASSERT_TRUE(cost.has_value());
  EXPECT_EQ(cost->protocol, cluster::Protocol::kSimple);
  EXPECT_NEAR(cost->latency_us, 8.4 + 6 * 3.4, 1e-9);
  EXPECT_NEAR(static_cast<double>(cost->start_ps), 25'200.0 * kPicosPerNano, 1.0);  // to the picosecond
  EXPECT_EQ(cost->wire_factor, 1.0);
  // Two ops more (the latency's Delay and its Wait), the schedule unchanged after them.
  CollectiveOptions plain;
  plain.gpus_per_node = p.gpus_per_node;
  ASSERT_EQ(expanded_count(op, 0, 0, simple), expanded_count(op, 0, 0, plain) + 2);
  const SimTime wire = run_alone(p, op, plain);
  const SimTime charged = run_alone(p, op, simple);
  RecordProperty("wire_us", std::to_string(cluster::seconds(wire) * 1e6));
  RecordProperty("charged_us", std::to_string(cluster::seconds(charged) * 1e6));
  EXPECT_EQ(charged, wire + cost->start_ps);

  // LL forced: the same schedule with twice the bytes on the wire (8 data bytes per 16-byte line), and LL's
  // latency: 6.6 + 6 x 0.6 = 10.2 us, of which 10.2 - 3.6 = 6.6 us is charged.
  const CollectiveOptions ll = with_nccl(p, cluster::Protocol::kLL);
  const auto ll_cost = nccl_op_cost(op, 0, ll);
  ASSERT_TRUE(ll_cost.has_value());
  EXPECT_NEAR(ll_cost->latency_us, 6.6 + 6 * 0.6, 1e-9);
  EXPECT_NEAR(static_cast<double>(ll_cost->start_ps), 6'600.0 * kPicosPerNano, 1.0);
  const workload::ComputeModel compute(workload::find_gpu_profile("A100-80GB"));
  std::uint64_t plain_bytes = 0, ll_bytes = 0;
  for (std::uint64_t s = 0; s < expanded_count(op, 0, 0, plain); ++s) {
    const cluster::GpuOp g = expand(op, 1, s, compute, 0, plain);
    if (g.kind == cluster::OpKind::kSend) plain_bytes += g.bytes;
  }
  for (std::uint64_t s = 0; s < expanded_count(op, 0, 0, ll); ++s) {
    const cluster::GpuOp g = expand(op, 1, s, compute, 0, ll);
    if (g.kind == cluster::OpKind::kSend) ll_bytes += g.bytes;
  }
  EXPECT_EQ(ll_bytes, 2 * plain_bytes);
}

// A pipeline receive pays NCCL's point-to-point latency (the base latency of the protocol chosen for its
// size) after its data arrived: [Recv, Wait, Delay, Wait]; the send is unchanged.
TEST(NcclCost, PipelineReceivePaysTheBaseLatency) {
  const cluster::ClusterParams p = fabric_params();
  CollectiveOptions o = with_nccl(p, std::nullopt);
  workload::Op recv;
  recv.kind = workload::OpKind::kRecv;
  recv.peer = 4;  // on the other node
  recv.comm_bytes = 32ull << 20;
  ASSERT_EQ(expanded_count(recv, 0, 0, o), 4u);
  const auto cost = nccl_op_cost(recv, 0, o);
  ASSERT_TRUE(cost.has_value());
  EXPECT_EQ(cost->protocol, cluster::Protocol::kSimple);  // 32 MiB: Simple
  EXPECT_NEAR(cost->latency_us, 8.4, 1e-9);
  const workload::ComputeModel compute(workload::find_gpu_profile("A100-80GB"));
  const cluster::GpuOp d = expand(recv, 0, 2, compute, 0, o);
  EXPECT_EQ(d.kind, cluster::OpKind::kDelay);
  EXPECT_NEAR(static_cast<double>(d.duration_ps), 8'400.0 * kPicosPerNano, 1.0);
  EXPECT_EQ(expand(recv, 0, 3, compute, 0, o).kind, cluster::OpKind::kWait);
  workload::Op send = recv;
  send.kind = workload::OpKind::kSend;
  EXPECT_EQ(expanded_count(send, 0, 0, o), 1u);
  EXPECT_EQ(expand(send, 4, 0, compute, 0, o).bytes, recv.comm_bytes);
  o.nccl = false;
  EXPECT_EQ(expanded_count(recv, 0, 0, o), 2u);
}

// The reductions' HBM traffic: each of the n - 1 reduce steps of a ring all-reduce gets a Delay of 3 x its
// slice / the HBM rate between its Recv and its Wait. At a rate far below the link's the reduce-scatter half
// takes (n - 1) reductions and the all-gather half is unchanged: T = T_wire / 2 + (n - 1) x 3 S/n / rate. At
// the A100's rate (2039 GB/s x 0.85, gpu-profiles.md) a 4 MiB slice reduces in 7.3 us, faster than NVLink
// moves it (9.3 us at 450 GB/s), so the time is the wire time: the reduction is off the critical path.
TEST(ReductionTraffic, ReduceStepsTakeTheLongerOfTransferAndReduction) {
  const cluster::ClusterParams p = fabric_params();
  const std::uint64_t bytes = 16ull << 20;
  const workload::Op op = tp_all_reduce(bytes);
  CollectiveOptions plain;
  plain.gpus_per_node = p.gpus_per_node;
  const SimTime wire = run_alone(p, op, plain);

  CollectiveOptions slow = plain;
  slow.reduce_bytes_per_s = 1e9;
  const SimTime reduce = reduce_step_ps(op, slow);
  EXPECT_EQ(reduce, static_cast<SimTime>(3.0 * (bytes / 4) / 1e9 * 1e12));
  ASSERT_EQ(expanded_count(op, 0, 0, slow), 6u * 4);  // 2(n-1) steps, one more op each
  const SimTime bound = run_alone(p, op, slow);
  RecordProperty("wire_us", std::to_string(cluster::seconds(wire) * 1e6));
  RecordProperty("reduce_bound_us", std::to_string(cluster::seconds(bound) * 1e6));
  EXPECT_NEAR(cluster::seconds(bound), cluster::seconds(wire / 2 + 3 * reduce), 1e-9);

  CollectiveOptions a100 = plain;
  const workload::GpuProfile& gpu = workload::find_gpu_profile("A100-80GB");
  a100.reduce_bytes_per_s = gpu.hbm_bytes_per_s * gpu.kernels.memory;
  EXPECT_LT(reduce_step_ps(op, a100), 9'400 * kPicosPerNano);
  EXPECT_EQ(run_alone(p, op, a100), wire);

  // All-gathers reduce nothing: no slot; the tree (not charged) and all-to-alls neither.
  workload::Op gather = op;
  gather.collective = CollectiveKind::kAllGather;
  EXPECT_EQ(reduce_step_ps(gather, slow), 0);
  EXPECT_EQ(expanded_count(gather, 0, 0, slow), expanded_count(gather, 0, 0, plain));
}

}  // namespace
}  // namespace warpsim::training
