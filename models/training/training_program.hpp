// A training job's per-GPU op streams (workload::GpuProgram) as cluster GPU programs (cluster::GpuProgram).
// Each workload op expands into a fixed number of cluster ops:
//   compute         -> Compute{ComputeModel time}                                   (1 op)
//   p2p send        -> Send (asynchronous)                                          (1)
//                      with parallelism.pipeline_p2p_sync: Send, Wait (blocks until it left the NIC) (2)
//   p2p recv        -> Recv, Wait (the workload's receive blocks)                   (2)
//   collective on n -> ring steps [Send to next, Recv from previous, Wait]: all-reduce 2(n-1) steps of B/n,
//                      reduce-scatter and all-gather n-1 steps of B/n, ring exchange n-1 steps of B;
//                      a group of several nodes with several members each (gpus_per_node given): NCCL's
//                      rail-aligned rings, one channel per member on a node (ring_order.hpp), each carrying
//                      1/C of every step: steps [C Sends, C Recvs, Wait]      ((2C + 1) ops per step)
//                      all-to-all: n-1 Sends of B/n, n-1 Recvs, one Wait; n == 1: nothing; skewed
//                      routing (model.moe_routing_skew): each Send/Recv carries its pair's routed bytes;
//                      hierarchical (parallelism.hierarchical_all_to_all, L members on each of N nodes):
//                      L-1 Sends, L-1 Recvs, Wait over NVLink, then N-1 Sends, N-1 Recvs, Wait on the rail
//   DP all-reduce,  -> the pipelined double binary tree (tree_schedule.hpp): chunks of dp_tree_chunk_bytes
//   tree algorithm     up both trees and back down, padded with no-op Waits to the longest member's count;
//                      with L rail members per node, NCCL's chained tree (L channels, 2L trees)
//                      (training.dp_allreduce_algorithm "tree": data-parallel and expert-data groups;
//                      "auto", the default: where NCCL's tuning model picks the tree for the bytes and group)
//   checkpoint      -> Storage write to target (rank mod targets), Wait; nothing without storage targets
//   data read       -> Storage read from target (rank mod targets), no Wait: the next Wait (the following
//                      collective or receive) waits for it; nothing without storage targets
// With training.overlap_grad_reduce, each step-end data-parallel/expert-data gradient bucket moves to the
// GPU's communication stream (stream 1): there it is [WaitStream for stream 0's op after which the bucket's
// gradients exist (grad_buckets.hpp), the bucket's expansion above], and on stream 0 it becomes one
// WaitStream for the end of its expansion on stream 1 (so the optimizer step waits for every bucket).
// With training.tp_comm_overlap (Transformer Engine userbuffers, sequence parallelism only), the layers'
// tensor-parallel all-gathers and reduce-scatters that sit next to their GEMM move to stream 1 too, and the
// GEMM is split into chunks (its time divided evenly):
//   all-gather -> GEMM ("ring exchange"): stream 1 runs the all-gather's ring; stream 0 runs the GEMM as TP
//     chunks, chunk 0 (the local slice) at once, chunk j after [WaitStream for ring step j-1's Wait].
//     The all-gather itself expands into nothing on stream 0. Its copies take no SMs (NeMo's ub configs give
//     ring exchange num_sm 1).
//   GEMM -> reduce-scatter, forward ("pipeline"): the GEMM runs as tp_comm_overlap_splits chunks on
//     sms - tp_comm_overlap_sms SMs (TE's set_sm_margin), each chunk's reduce-scatter piece (1/splits of the
//     bytes) on stream 1 after it; stream 0 has one WaitStream for the last piece where the collective was.
//   GEMM -> reduce-scatter, backward ("bulk"): the backward GEMM runs as two chunks (data gradient, then
//     weight gradient on sms - tp_comm_overlap_sms SMs); the whole reduce-scatter of the data gradient runs
//     on stream 1 after the first; stream 0 waits for it where the collective was.
// Stream 1's items (gradient buckets and TP pieces) run in the order of the stream-0 op they wait for, one
// after another. There is one communication stream where the frameworks have one per communicator, so a TP
// piece queued behind a gradient bucket would wait for its whole reduce: with overlap_grad_reduce, the TP
// collectives from the first bucket's ready op on (the last micro-batches' backward) stay on stream 0,
// unoverlapped (pessimistic there).
// Context parallelism's KV ring exchange (CP > 1, fused attention; on unless training.no_cp_comm_overlap)
// runs as Transformer Engine's ring attention does, the same way as the TP all-gather -> GEMM above: the ring
// (NCCL's cost included) moves to stream 1 after the op before it, and the attention runs as CP chunks, chunk
// 0 (the local KV block) at once, chunk j after [WaitStream for ring step j-1's Wait]; forward: ring then
// attention in op order, backward: the attention's backward before the ring's place, which expands to
// nothing. The backward's return of the KV gradients to their owners is not a separate transfer here.
// ZeRO-3's per-layer parameter all-gathers (on unless training.no_zero3_prefetch) move to stream 1, each
// issued once stream 0 has passed the previous layer's gather in the same pass (one layer of prefetch, as
// FSDP and DeepSpeed run it; a pass's first layer: after the op before it); stream 0 keeps one WaitStream for
// its end. With training.overlap_param_gather (ZeRO-1/2), the step-end parameter all-gather buckets move to
// stream 1 at the START of the step, in the order the first micro-batch's forward needs them
// (param_gather.hpp): the gathers of step s (which stand for those dispatched after step s-1's optimizer,
// Megatron-Core's
// --overlap-param-gather) wait for stream 0 to finish step s-1, and expand into nothing on stream 0, where
// the first forward op of each layer that a bucket's first byte belongs to gets a WaitStream for the end of
// that bucket first. TP collectives up to the last such op stay on stream 0 (they would queue behind the
// gathers on the one communication stream).
// So op i of GPU g stays a pure function of (g, i): a per-stage prefix table of expanded op counts over one
// step (stages with identical tables share one) locates the workload op, whose expansion is arithmetic.
// Memory is O(ops per step x distinct stage shapes), independent of the number of GPUs. GPUs beyond the
// job's world size are idle.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "models/cluster/collective_algorithms.hpp"
#include "models/cluster/gpu_program.hpp"
#include "models/cluster/nccl_tuning.hpp"
#include "models/workload/gpu_program.hpp"
#include "models/workload/job.hpp"

namespace warpsim::training {

// What a communication op serves, for what-if attribution: a program built with a class's bit in
// `disabled` expands that class's ops into nothing (both ends alike, so matching still holds).
enum class CommClass : std::uint8_t {
  kTensor,
  kContext,
  kData,
  kExpert,
  kPipeline,
  kCheckpoint,
  kDataLoader,
  kCount,
};
const char* to_string(CommClass c);
// The class of a non-compute op (data: DP x CP gradients, expert-data gradients, tied embeddings).
CommClass comm_class(const workload::Op& op);
constexpr std::uint32_t bit(CommClass c) {
  return 1u << static_cast<unsigned>(c);
}
// The label expand() puts on a class's Waits (cluster::GpuOp::wait_label; 0 stays unlabelled), and back.
constexpr std::uint8_t wait_label(CommClass c) {
  return static_cast<std::uint8_t>(static_cast<unsigned>(c) + 1);
}
static_assert(static_cast<unsigned>(CommClass::kCount) < cluster::kWaitLabels);

// How the adapter runs the collectives the spec lets it choose for (default: all rings).
struct CollectiveOptions {
  // The data-parallel all-reduces' algorithm (ring or tree), from the collective-algorithm registry, or
  // with `dp_allreduce_auto` the one NCCL's tuning model picks for each all-reduce by its bytes and its
  // group's ranks and nodes (cluster::nccl_allreduce_algorithm; training.dp_allreduce_algorithm "auto").
  cluster::Algorithm dp_allreduce = cluster::Algorithm::kRing;
  bool dp_allreduce_auto = false;
  // The tree's pipeline chunk; 0 = NCCL's: its Simple step (4 MiB buffer / 8 steps = 512 KiB) per channel,
  // times the channels the flat tree stands for (the group's members per node, one per rail).
  std::uint64_t tree_chunk_bytes = 0;
  bool sync_p2p = false;  // pipeline sends wait for their completion
  // GPUs per cluster node (0: unknown, every ring is the flat ring of the group's member order). With it, a
  // ring collective (all-reduce, reduce-scatter, all-gather) over a group that spans several nodes with the
  // same number of members on each runs as NCCL lays its rings out on a rail-optimized fabric: every
  // inter-node hop joins GPUs of the same rail, and one channel per member on a node (so per NIC), each
  // carrying its share of the bytes. The flat order would hop from the last member of one node to the
  // first of the next, across rails and through the spines, on one NIC per node.
  std::uint32_t gpus_per_node = 0;
  // Expert all-to-alls: skewed per-peer volumes (null or balanced: comm_bytes / n to each peer), and with
  // `hierarchical_all_to_all` (and gpus_per_node) two phases where the expert group spans several nodes
  // with the same number of members on each (hierarchical_all_to_all_members below).
  const workload::MoeRouting* routing = nullptr;
  bool hierarchical_all_to_all = false;
  // NCCL's per-call launch and protocol latency and its protocol's wire bytes (training.nccl_protocol;
  // cluster/nccl_tuning.hpp, docs/collectives.md): a collective expands with [Delay, Wait] before its
  // schedule, the Delay being NCCL's latency beyond the wire latency the cluster model simulates for the
  // same steps; a pipeline receive with [Delay, Wait] after it (NCCL's point-to-point: the base latency);
  // every Send and Recv carries the protocol's wire bytes. Off here by default; collective_options turns it
  // on as the job says.
  bool nccl = false;
  std::optional<cluster::Protocol> nccl_protocol;  // forced; none = the protocol NCCL picks by size
  cluster::NcclFabric fabric;                      // wire latency per step and bandwidths (the cluster's)
  // The HBM rate (bytes/s) of a reduction's traffic; 0 = reductions are free. Each reduce step of a ring
  // all-reduce or reduce-scatter gets a Delay of 3 x its slice / rate (two reads and a write) between its
  // Recvs and its Wait, so the step takes the longer of its transfer and its reduction (NCCL reduces a
  // slice while the next streams in); the other steps of those collectives get a Wait there instead.
  double reduce_bytes_per_s = 0;
};
// Nodes the members of `group` sit on (1 when gpus_per_node is 0).
std::uint32_t group_nodes(const workload::GroupDesc& group, std::uint32_t gpus_per_node);
// NCCL's cost of `op` on GPU `rank` under `options` (a collective over 2 or more members, or a pipeline
// send/receive), or nullopt where none is charged. An all-to-all and a point-to-point message pay NCCL's
// base latency (nccl_tuning: no ring steps); a context-parallel ring exchange pays it once per step.
std::optional<cluster::NcclCost> nccl_op_cost(const workload::Op& op, std::uint32_t rank,
                                              const CollectiveOptions& options);
// The time of one reduce step of `op` (3 x its slice at options.reduce_bytes_per_s), 0 where `op` has no
// reduce steps or reductions are free.
SimTime reduce_step_ps(const workload::Op& op, const CollectiveOptions& options);
// Members per node of an expert all-to-all's group when it runs hierarchically under `options` (the rail
// layout's condition, rail_members_per_node), else 1 (the flat all-to-all).
std::uint32_t hierarchical_all_to_all_members(const workload::Op& op, const CollectiveOptions& options);
// Members per node of `group` when the rail-aligned rings apply (see gpus_per_node above), else 1: the
// group is one arithmetic progression of GPU ranks with a stride that divides gpus_per_node, it starts within
// the first stride of its node (so every node it touches holds the same members), and it spans several
// nodes with several members each.
std::uint32_t rail_members_per_node(const workload::GroupDesc& group, std::uint32_t gpus_per_node);
// The rail channels `op` runs on (its members per node, see above) when it is a ring all-reduce,
// reduce-scatter or all-gather that qualifies; 1 (the flat ring) otherwise. Each ring step is then C Sends
// (channel c's is sub-op c of the step), C Recvs and a Wait.
std::uint32_t ring_channels(const workload::Op& op, const CollectiveOptions& options);
CollectiveOptions collective_options(const workload::Job& job);
// Whether `op` runs as the tree under `options`: a data-parallel or expert-data all-reduce under the tree,
// or under "auto" where NCCL's tuning model prefers the tree for its bytes and group and warpsim builds
// NCCL's tree for the group: one member per node, or the same members on each node one per rail (the
// chained tree); any other layout keeps the ring (memoized per thread; docs/collectives.md).
bool uses_tree(const workload::Op& op, const CollectiveOptions& options);
// Members per node of `op`'s tree: its rail members per node (> 1: NCCL's chained tree), 1 for the flat tree.
std::uint32_t tree_members_per_node(const workload::Op& op, const CollectiveOptions& options);
// The pipeline chunk of `op`'s tree: options.tree_chunk_bytes, or NCCL's (see there).
std::uint64_t tree_chunk_bytes(const workload::Op& op, const CollectiveOptions& options);

// Cluster ops one workload op expands into (see the table above); 0 for a disabled class.
std::uint64_t expanded_count(const workload::Op& op, std::uint32_t storage_targets,
                             std::uint32_t disabled = 0, const CollectiveOptions& options = {});
// The `sub`-th of them for GPU `rank` (sub < expanded_count).
cluster::GpuOp expand(const workload::Op& op, std::uint32_t rank, std::uint64_t sub,
                      const workload::ComputeModel& compute, std::uint32_t storage_targets,
                      const CollectiveOptions& options = {});

class TrainingProgram final : public cluster::GpuProgram {
 public:
  // gpus_per_node (0 = unknown): the rail-aligned rings of CollectiveOptions, and (overlap_grad_reduce only)
  // NCCL's channel limit for the communication stream's collectives (one ring per rail, as `warpsim
  // collective`); each channel is one CTA, and compute ops that start while stream 1 communicates run
  // sms / (sms - CTAs) times longer. 0: flat rings and no such slowdown.
  // fabric: the cluster's wire latency and bandwidths, for NCCL's latency and protocol choice
  // (CollectiveOptions::nccl; with the default, NCCL's whole latency is charged and the protocol picked by
  // latency alone).
  TrainingProgram(std::shared_ptr<const workload::Job> job, std::uint32_t steps,
                  std::uint32_t storage_targets, std::uint32_t disabled = 0, std::uint32_t gpus_per_node = 0,
                  const cluster::NcclFabric& fabric = {});
  std::optional<cluster::GpuOp> op(std::uint32_t gpu, std::uint64_t index) const override;
  bool has_comm_stream() const override {
    return overlap_ || tp_overlap_ || param_overlap_ || cp_overlap_ || zero3_prefetch_;
  }
  SimTime contended_ps(std::uint32_t gpu, SimTime duration) const override;
  // TP pieces' SMs are charged in their GEMM chunks' durations: only gradient buckets contend.
  bool comm_contends(std::uint32_t gpu, std::uint64_t comm_pc) const override;
  // CTAs the communication stream's collectives take on a GPU of `stage` (0 = no slowdown).
  std::uint32_t comm_ctas(std::uint32_t stage) const { return table(stage).comm_ctas; }
  std::optional<cluster::GpuOp> comm_op(std::uint32_t gpu, std::uint64_t index) const override;

  std::uint32_t steps() const { return steps_; }
  const workload::Job& job() const { return *job_; }
  // Cluster ops of `gpu` over all steps (0 beyond the world size).
  std::uint64_t size(std::uint32_t gpu) const;
  // Distinct per-stage prefix tables held (for the memory bound).
  std::size_t distinct_tables() const { return tables_.size(); }
  // Where cluster op `index` of `gpu` comes from: the workload op index and the sub-op within it.
  struct Source {
    std::uint64_t workload_index = 0;
    std::uint64_t sub = 0;
  };
  std::optional<Source> source(std::uint32_t gpu, std::uint64_t index) const;

 private:
  // An item on the communication stream: a gradient bucket (overlap_grad_reduce) or a piece of an overlapped
  // TP collective (tp_comm_overlap). Per step, its ops start at `offset` (the WaitStream), the `count`
  // expanded ops of the collective (its bytes / `pieces`) follow.
  struct CommBucket {
    std::uint64_t workload_op = 0;  // the collective's workload op, index within the step
    std::uint64_t ready_op = 0;     // stream 0's expanded op (index within the step) the item waits for
    std::uint64_t offset = 0;
    std::uint64_t count = 0;
    std::uint32_t pieces = 1;  // TP reduce-scatter pieces: the collective's bytes are split this many ways
    std::uint32_t piece = 0;   // which one (tags apart)
    bool tp = false;           // a TP piece (its SMs are charged in the GEMM: no dynamic contention)
    bool cp = false;  // a context-parallel KV ring (with `tp`: no contention; NCCL's cost, unlike TP pieces)
    bool operator==(const CommBucket&) const = default;
  };
  // How stream 0 expands a workload op that tp_comm_overlap rewrites (see the header comment).
  struct TpOverride {
    enum Kind : std::uint8_t { kGemmAfterGather, kGemmBeforeScatter, kGatherGone, kScatterWait };
    std::uint64_t workload_op = 0;  // index within the step
    Kind kind = kGatherGone;
    std::uint32_t chunks = 1;       // GEMMs: the chunks it runs as
    std::uint32_t slowed_from = 0;  // kGemmBeforeScatter: chunks from this one on run on fewer SMs
    std::uint64_t item = 0;         // the all-gather's item, or the last reduce-scatter piece's
    // kGemmAfterGather: the item's ops before its ring steps (NCCL's [Delay, Wait] on a CP ring), and the
    // class its WaitStreams are attributed to (tensor, or context for the CP ring).
    std::uint32_t lead = 0;
    CommClass cls = CommClass::kTensor;
    bool operator==(const TpOverride&) const = default;
  };
  // overlap_param_gather: a first-micro-batch forward op that first waits (its sub-op 0, a WaitStream) for
  // the end of a parameter all-gather item on stream 1, the last one it needs.
  struct ParamWait {
    std::uint64_t workload_op = 0;  // index within the step
    std::uint64_t item = 0;         // index into StageTable::comm
    bool operator==(const ParamWait&) const = default;
  };
  struct StageTable {
    std::vector<std::uint64_t> prefix;   // prefix[k] = expanded ops of the step's workload ops [0, k)
    std::uint64_t checkpoint_ops = 0;    // expanded ops of the checkpoint write
    std::vector<CommBucket> comm;        // stream 1's items, in order
    std::uint64_t comm_per_step = 0;     // stream 1's ops per step
    std::uint32_t comm_ctas = 0;         // NCCL CTAs of stream 1's gradient buckets (the largest bucket's)
    std::vector<TpOverride> tp;          // tp_comm_overlap's rewritten ops, by workload op
    std::vector<ParamWait> param_waits;  // overlap_param_gather's waiting forward ops, by workload op
  };
  // The stream-0 op `sub` of an op tp_comm_overlap rewrites.
  cluster::GpuOp tp_op(std::uint32_t gpu, const StageTable& t, const TpOverride& o, const workload::Op& op,
                       std::uint64_t step, std::uint64_t sub) const;
  // Streaming multiprocessors of `gpu` (its node group's GPU type).
  std::uint32_t gpu_sms(std::uint32_t gpu) const {
    return job_->mixed_gpus() ? static_cast<std::uint32_t>(job_->gpu(gpu).sms) : sms_;
  }
  const StageTable& table(std::uint32_t stage) const { return tables_[stage_table_[stage]]; }
  std::uint64_t step_start(const StageTable& t, std::uint32_t step) const;  // expanded index

  std::shared_ptr<const workload::Job> job_;
  std::uint32_t steps_;
  std::uint32_t storage_targets_;
  std::uint32_t disabled_;
  bool overlap_ = false;         // training.overlap_grad_reduce
  bool tp_overlap_ = false;      // training.tp_comm_overlap (with sequence parallelism)
  bool param_overlap_ = false;   // training.overlap_param_gather
  bool cp_overlap_ = false;      // context parallelism's KV ring overlapped with attention (the default)
  bool zero3_prefetch_ = false;  // ZeRO-3's parameter all-gathers one layer ahead (the default)
  std::uint32_t tp_splits_ = 4, tp_sms_ = 16;
  std::uint32_t sms_ = 0;  // the GPU's streaming multiprocessors (the fewest, several GPU types)
  CollectiveOptions collectives_;
  // The TP pieces' options: Transformer Engine's userbuffers, not NCCL (no NCCL latency or protocol).
  CollectiveOptions userbuffers_;
  std::vector<StageTable> tables_;
  std::vector<std::uint32_t> stage_table_;  // [stage] -> index into tables_
};

}  // namespace warpsim::training
