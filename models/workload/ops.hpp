// The abstract ops a GPU executes: compute ops (FLOPs + HBM bytes), point-to-point sends/receives and
// collectives on communicator groups whose members are computed arithmetically (GroupDesc). This is the
// vocabulary between the workload generator and whatever executes it (cluster LPs, the compute-only
// estimator, tests).
#pragma once

#include <cstdint>
#include <string_view>

#include "models/workload/attention_call.hpp"
#include "models/workload/gemm_shape.hpp"
#include "models/workload/gpu_profile.hpp"

namespace warpsim::workload {

enum class OpKind : std::uint8_t {
  kCompute,          // flops/bytes/dtype; time from the ComputeModel
  kSend,             // asynchronous point-to-point send of comm_bytes to peer (the GPU does not wait)
  kRecv,             // blocks until the matching send (peer, tag) has arrived
  kCollective,       // blocking collective of `collective` kind on `group`
  kCheckpointWrite,  // comm_bytes written to storage (this GPU's shard of the checkpoint)
  kDataRead,         // asynchronous read of comm_bytes from storage (the data loader's next batch)
};

// Which measured efficiency the compute model applies to a compute op's FLOPs (docs/gpu-profiles.md).
enum class KernelKind : std::uint8_t {
  kMatmul,        // GEMMs and batched GEMMs, and any op whose FLOPs are negligible (elementwise)
  kAttentionFwd,  // fused (flash) attention forward
  kAttentionBwd,  // fused (flash) attention backward
};

enum class CollectiveKind : std::uint8_t {
  kAllReduce,      // comm_bytes = size of the buffer reduced (same on every member)
  kReduceScatter,  // comm_bytes = size of the full input buffer; each member keeps 1/n
  kAllGather,      // comm_bytes = size of the full output buffer; each member contributes 1/n
  kAllToAll,       // comm_bytes = this member's send buffer, spread evenly over the members
  kRingExchange,   // context-parallel ring: (n-1) steps, each passing comm_bytes to the next member
};

enum class GroupKind : std::uint8_t {
  kTensor,             // TP group
  kContext,            // CP group
  kDataContext,        // DP x CP: dense gradients are reduced here
  kExpert,             // EP group (carved out of DP)
  kExpertDataContext,  // expert gradients: DP x CP members holding the same experts
  kEmbedding,          // first and last pipeline stage (tied embedding gradients)
};

enum class Phase : std::uint8_t {
  kForward,
  kBackward,
  kRecompute,
  kGradSync,
  kOptimizer,
  kCheckpoint,
  kDataLoad,
};

std::string_view to_string(OpKind k);
std::string_view to_string(CollectiveKind k);
std::string_view to_string(GroupKind k);
std::string_view to_string(Phase p);

// A communicator group as a two-level arithmetic progression of global GPU ranks:
// member(i) = first + (i % inner_size) * inner_stride + (i / inner_size) * outer_stride.
struct GroupDesc {
  std::uint32_t first = 0;
  std::uint32_t inner_stride = 1;
  std::uint32_t inner_size = 1;
  std::uint32_t outer_stride = 0;
  std::uint32_t outer_size = 1;

  std::uint32_t size() const { return inner_size * outer_size; }
  std::uint32_t member(std::uint32_t i) const {
    return first + (i % inner_size) * inner_stride + (i / inner_size) * outer_stride;
  }
  // Position of `rank` in the group, or size() when it is not a member.
  std::uint32_t index_of(std::uint32_t rank) const;
  bool operator==(const GroupDesc&) const = default;
};

// Op::route values: a routed-expert compute op, an all-to-all towards the experts' GPUs or back from them.
inline constexpr std::uint8_t kRouteCompute = 1, kRouteDispatch = 2, kRouteCombine = 3;

struct Op {
  OpKind kind = OpKind::kCompute;
  Phase phase = Phase::kForward;
  std::string_view name;  // stable op name (docs/workload.md); key of the measured table
  // kCompute
  double flops = 0;
  double bytes = 0;  // HBM traffic
  DType dtype = DType::kBf16;
  GemmShape gemm;                           // kCompute: the matrix multiply's shape (m == 0: not a GEMM)
  KernelKind kernel = KernelKind::kMatmul;  // kCompute: efficiency class
  AttentionCall attention;  // kCompute fused attention: its mask and head dimension (none by default)
  std::uint64_t fixed_duration_ps = 0;  // kCompute: measured duration that replaces the model (trace replay)
  // kSend / kRecv / kCollective / kCheckpointWrite / kDataRead
  std::uint64_t comm_bytes = 0;
  std::uint32_t peer = 0;  // kSend: destination GPU; kRecv: source GPU
  std::uint64_t tag = 0;   // kSend/kRecv: equal on the matching pair, unique per (pair, step)
  CollectiveKind collective = CollectiveKind::kAllReduce;
  GroupKind group_kind = GroupKind::kTensor;
  GroupDesc group;
  // Position in the training step (for reporting; 0 where not meaningful).
  std::uint32_t step = 0;
  std::uint32_t microbatch = 0;
  std::uint32_t chunk = 0;  // virtual pipeline chunk
  std::uint32_t layer = 0;  // global layer index
  // Routed-expert work (kRoute* above): 0 none. A kAllToAll with kRouteDispatch/kRouteCombine sends
  // per-peer volumes from the job's MoeRouting (comm_bytes is then the balanced total).
  std::uint8_t route = 0;
  double route_fixed_bytes = 0;
};

// Bytes each member sends over the wire for a collective executed as a ring (bandwidth term only):
// all-reduce 2(n-1)/n B, reduce-scatter and all-gather (n-1)/n B, all-to-all (n-1)/n B, ring exchange (n-1)
// B.
double ring_bytes_sent_per_member(CollectiveKind kind, std::uint32_t n, double bytes);

}  // namespace warpsim::workload
