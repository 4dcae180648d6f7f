// Collective GPU programs (see collectives.hpp).
#include "models/cluster/collectives.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace warpsim::cluster {

std::optional<Collective> parse_collective(std::string_view name) {
  if (name == "allreduce") return Collective::kAllReduce;
  if (name == "allgather") return Collective::kAllGather;
  if (name == "reducescatter") return Collective::kReduceScatter;
  if (name == "alltoall") return Collective::kAllToAll;
  if (name == "broadcast") return Collective::kBroadcast;
  return std::nullopt;
}

std::string_view to_string(Collective c) {
  switch (c) {
    case Collective::kAllReduce:
      return "allreduce";
    case Collective::kAllGather:
      return "allgather";
    case Collective::kReduceScatter:
      return "reducescatter";
    case Collective::kAllToAll:
      return "alltoall";
    case Collective::kBroadcast:
      return "broadcast";
  }
  return "?";
}

double bus_factor(Collective c, std::uint32_t n) {
  const double nn = n;
  switch (c) {
    case Collective::kAllReduce:
      return n > 0 ? 2.0 * (nn - 1) / nn : 0;
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll:
      return n > 0 ? (nn - 1) / nn : 0;
    case Collective::kBroadcast:
      return 1.0;
  }
  return 0;
}

std::optional<std::uint32_t> GpuGroup::rank_of(std::uint32_t gpu) const {
  if (gpu < first) return std::nullopt;
  const std::uint32_t offset = gpu - first;
  if (offset % stride != 0) return std::nullopt;
  const std::uint32_t rank = offset / stride;
  if (rank >= count) return std::nullopt;
  return rank;
}

CollectiveProgram::CollectiveProgram(Collective collective, Algorithm algorithm, GpuGroup group,
                                     std::uint64_t bytes, std::uint64_t chunk_bytes, std::uint32_t local_size,
                                     std::uint32_t channels)
    : collective_(collective),
      group_(group),
      rings_(std::max<std::uint32_t>(1, group.count),
             local_size > 0 && group.count % local_size == 0 ? local_size : 1, channels),
      bytes_(bytes),
      chunk_bytes_(std::max<std::uint64_t>(1, chunk_bytes)) {
  if (group.count == 0 || group.stride == 0)
    throw std::invalid_argument("collective group: count and stride must be >= 1");
  if (group.count > 65535) throw std::invalid_argument("collective group: at most 65535 GPUs");
  if (!collective_algorithm(algorithm).implements(collective)) {
    throw std::invalid_argument("collective: the " + std::string(to_string(algorithm)) +
                                " algorithm implements " + supported_collectives(algorithm) + ", not " +
                                std::string(to_string(collective)));
  }
  if (algorithm == Algorithm::kTree) {
    if (collective == Collective::kBroadcast) {
      tree_broadcast_.emplace(group.count, bytes, chunk_bytes_);
    } else {
      // With local_size GPUs of the group on each node, NCCL's chained tree (tree_collectives.hpp).
      tree_.emplace(group.count, bytes, chunk_bytes_,
                    local_size > 1 && group.count % local_size == 0 ? local_size : 1);
    }
  }
  if (algorithm == Algorithm::kHierarchical && collective == Collective::kBroadcast) {
    hierarchical_broadcast_.emplace(group.count, local_size, bytes, chunk_bytes_);
  } else if (algorithm == Algorithm::kHierarchical) {
    const auto kind = collective == Collective::kReduceScatter ? HierarchicalSchedule::Kind::kReduceScatter
                      : collective == Collective::kAllGather   ? HierarchicalSchedule::Kind::kAllGather
                                                               : HierarchicalSchedule::Kind::kAllReduce;
    hierarchical_.emplace(kind, group.count, local_size, bytes);
  }
}

std::optional<GpuOp> CollectiveProgram::to_gpu_op(const std::optional<RankOp>& op) const {
  if (!op) return std::nullopt;
  switch (op->kind) {
    case OpKind::kSend:
      return GpuOp::send(group_.gpu_at(op->peer), op->bytes, op->tag);
    case OpKind::kRecv:
      return GpuOp::recv(group_.gpu_at(op->peer), op->bytes, op->tag);
    default:
      return GpuOp::wait();
  }
}

std::uint64_t CollectiveProgram::share(std::uint64_t chunk) const {
  const std::uint64_t n = group_.count;
  return bytes_ / n + (chunk < bytes_ % n ? 1 : 0);
}

std::optional<GpuOp> CollectiveProgram::op(std::uint32_t gpu, std::uint64_t index) const {
  if (!group_.rank_of(gpu) || group_.count == 1) return std::nullopt;
  if (start_ps_ > 0) {
    if (index == 0) return GpuOp::compute(start_ps_);
    --index;
  }
  std::optional<GpuOp> g = schedule_op(gpu, index);
  if (g && wire_factor_ != 1 && (g->kind == OpKind::kSend || g->kind == OpKind::kRecv))
    g->bytes = static_cast<std::uint64_t>(std::ceil(static_cast<double>(g->bytes) * wire_factor_));
  return g;
}

std::optional<GpuOp> CollectiveProgram::schedule_op(std::uint32_t gpu, std::uint64_t index) const {
  const auto rank = group_.rank_of(gpu);
  const std::uint64_t n = group_.count;
  if (tree_) return to_gpu_op(tree_->op(*rank, index));
  if (tree_broadcast_) return to_gpu_op(tree_broadcast_->op(*rank, index));
  if (hierarchical_broadcast_) return to_gpu_op(hierarchical_broadcast_->op(*rank, index));
  if (hierarchical_) return to_gpu_op(hierarchical_->op(*rank, index));
  switch (collective_) {
    case Collective::kAllReduce:
      return ring_steps(*rank, index, 2 * (n - 1));
    case Collective::kAllGather:
    case Collective::kReduceScatter:
      return ring_steps(*rank, index, n - 1);
    case Collective::kAllToAll:
      return all_to_all(*rank, index);
    case Collective::kBroadcast:
      return broadcast(*rank, index);
  }
  return std::nullopt;
}

// Step s, for every channel c: send slice (p - s) mod n of the channel's part to the right neighbour, receive
// slice (p - s - 1) mod n from the left (p: this rank's position in channel c); then wait for all. Tags are
// step x channels + c, so (peer, tag) is unique per message (one channel: the step number).
std::optional<GpuOp> CollectiveProgram::ring_steps(std::uint32_t k, std::uint64_t index,
                                                   std::uint64_t steps) const {
  const std::uint64_t n = group_.count, C = rings_.channels(), per_step = 2 * C + 1;
  const std::uint64_t step = index / per_step, sub = index % per_step;
  if (step >= steps) return std::nullopt;
  if (sub == 2 * C) return GpuOp::wait();
  const auto c = static_cast<std::uint32_t>(sub % C);
  const auto tag = static_cast<std::uint32_t>(step * C + c);
  const std::uint64_t part = slice_bytes(bytes_, C, c), p = rings_.position_of(c, k), s = step % n;
  if (sub < C)
    return GpuOp::send(group_.gpu_at(rings_.right(c, k)), slice_bytes(part, n, (p + n - s) % n), tag);
  return GpuOp::recv(group_.gpu_at(rings_.left(c, k)), slice_bytes(part, n, (p + 2 * n - s - 1) % n), tag);
}

// Post every send (to k+j) and receive (from k-j), j = 1..n-1, then wait for all.
std::optional<GpuOp> CollectiveProgram::all_to_all(std::uint32_t k, std::uint64_t index) const {
  const std::uint64_t n = group_.count;
  const std::uint64_t pairs = n - 1;
  if (index == 2 * pairs) return GpuOp::wait();
  if (index > 2 * pairs) return std::nullopt;
  const std::uint64_t j = index / 2 + 1;
  const auto tag = static_cast<std::uint32_t>(j);
  if (index % 2 == 0)
    return GpuOp::send(group_.gpu_at(static_cast<std::uint32_t>((k + j) % n)), share(k), tag);
  return GpuOp::recv(group_.gpu_at(static_cast<std::uint32_t>((k + n - j) % n)), share((k + n - j) % n), tag);
}

// Root (rank 0, ring position 0) sends chunk c, waits; middle ranks receive chunk c, wait, forward it; the
// last rank only receives (positions along the ring). Every rank ends with a Wait.
std::optional<GpuOp> CollectiveProgram::broadcast(std::uint32_t rank, std::uint64_t index) const {
  const std::uint64_t n = group_.count;
  const std::uint64_t chunks = std::max<std::uint64_t>(1, (bytes_ + chunk_bytes_ - 1) / chunk_bytes_);
  auto chunk_size = [&](std::uint64_t c) {
    if (bytes_ == 0) return std::uint64_t{0};
    return std::min(chunk_bytes_, bytes_ - c * chunk_bytes_);
  };
  // The chain follows channel 0's rail-aligned ring (the identity order within one node); rank 0 is its
  // position 0.
  const std::uint64_t p = rings_.position_of(0, rank);
  const auto right = group_.gpu_at(rings_.rank_at(0, (p + 1) % n));
  const auto left = group_.gpu_at(rings_.rank_at(0, (p + n - 1) % n));
  if (p == 0) {
    if (index >= 2 * chunks) return std::nullopt;
    const std::uint64_t c = index / 2;
    if (index % 2 == 0) return GpuOp::send(right, chunk_size(c), static_cast<std::uint32_t>(c));
    return GpuOp::wait();
  }
  if (p == n - 1) {
    if (index < chunks) return GpuOp::recv(left, chunk_size(index), static_cast<std::uint32_t>(index));
    if (index == chunks) return GpuOp::wait();
    return std::nullopt;
  }
  if (index == 3 * chunks) return GpuOp::wait();
  if (index > 3 * chunks) return std::nullopt;
  const std::uint64_t c = index / 3;
  switch (index % 3) {
    case 0:
      return GpuOp::recv(left, chunk_size(c), static_cast<std::uint32_t>(c));
    case 1:
      return GpuOp::wait();
    default:
      return GpuOp::send(right, chunk_size(c), static_cast<std::uint32_t>(c));
  }
}

}  // namespace warpsim::cluster
