// Names and arithmetic of the abstract ops (see ops.hpp).
#include "models/workload/ops.hpp"

namespace warpsim::workload {

std::string_view to_string(OpKind k) {
  switch (k) {
    case OpKind::kCompute:
      return "compute";
    case OpKind::kSend:
      return "send";
    case OpKind::kRecv:
      return "recv";
    case OpKind::kCollective:
      return "collective";
    case OpKind::kCheckpointWrite:
      return "checkpoint_write";
    case OpKind::kDataRead:
      return "data_read";
  }
  return "?";
}

std::string_view to_string(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::kAllReduce:
      return "all_reduce";
    case CollectiveKind::kReduceScatter:
      return "reduce_scatter";
    case CollectiveKind::kAllGather:
      return "all_gather";
    case CollectiveKind::kAllToAll:
      return "all_to_all";
    case CollectiveKind::kRingExchange:
      return "ring_exchange";
  }
  return "?";
}

std::string_view to_string(GroupKind k) {
  switch (k) {
    case GroupKind::kTensor:
      return "tensor";
    case GroupKind::kContext:
      return "context";
    case GroupKind::kDataContext:
      return "data_context";
    case GroupKind::kExpert:
      return "expert";
    case GroupKind::kExpertDataContext:
      return "expert_data_context";
    case GroupKind::kEmbedding:
      return "embedding";
  }
  return "?";
}

std::string_view to_string(Phase p) {
  switch (p) {
    case Phase::kForward:
      return "forward";
    case Phase::kBackward:
      return "backward";
    case Phase::kRecompute:
      return "recompute";
    case Phase::kGradSync:
      return "grad_sync";
    case Phase::kOptimizer:
      return "optimizer";
    case Phase::kCheckpoint:
      return "checkpoint";
    case Phase::kDataLoad:
      return "data_load";
  }
  return "?";
}

std::uint32_t GroupDesc::index_of(std::uint32_t rank) const {
  if (rank < first) return size();
  const std::uint32_t off = rank - first;
  // Strides may interleave (outer < inner * inner_stride is legal), so search the outer index.
  for (std::uint32_t o = 0; o < outer_size; ++o) {
    const std::uint32_t base = o * outer_stride;
    if (off < base) break;
    const std::uint32_t rest = off - base;
    if (rest % inner_stride == 0 && rest / inner_stride < inner_size)
      return o * inner_size + rest / inner_stride;
  }
  return size();
}

double ring_bytes_sent_per_member(CollectiveKind kind, std::uint32_t n, double bytes) {
  if (n <= 1) return 0;
  const double f = static_cast<double>(n - 1) / n;
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return 2 * f * bytes;
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllGather:
    case CollectiveKind::kAllToAll:
      return f * bytes;
    case CollectiveKind::kRingExchange:
      return (n - 1) * bytes;
  }
  return 0;
}

}  // namespace warpsim::workload
