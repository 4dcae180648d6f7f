// Two-level ring schedules (see hierarchical_collectives.hpp).
#include "models/cluster/hierarchical_collectives.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace warpsim::cluster {

namespace {

// Sub-op `sub` (send, recv, wait) of ring step `s` for position k of K whose neighbours are `right` and
// `left`, moving slices of `total` cut K ways: send slice k - s, receive slice k - s - 1. The same pattern
// serves reduce-scatter (after K-1 steps position k owns slice k+1, reduced) and all-gather (position k
// starts with slice k).
RankOp ring_op(std::uint64_t k, std::uint64_t K, std::uint64_t s, std::uint64_t sub, std::uint32_t right,
               std::uint32_t left, std::uint64_t total, std::uint64_t tag) {
  const auto t = static_cast<std::uint32_t>(tag);
  switch (sub) {
    case 0:
      return {OpKind::kSend, right, slice_bytes(total, K, (k + K - s % K) % K), t};
    case 1:
      return {OpKind::kRecv, left, slice_bytes(total, K, (k + 2 * K - s % K - 1) % K), t};
    default:
      return RankOp{};
  }
}

}  // namespace

HierarchicalSchedule::HierarchicalSchedule(Kind kind, std::uint32_t n, std::uint32_t local,
                                           std::uint64_t bytes)
    : kind_(kind), n_(n), local_(local), nodes_(local == 0 ? 0 : n / local), bytes_(bytes) {
  if (local == 0 || n == 0 || n % local != 0)
    throw std::invalid_argument(
        "hierarchical collective: the group size must be a multiple of the node size");
}

std::uint64_t HierarchicalSchedule::steps() const {
  if (n_ < 2) return 0;
  const std::uint64_t intra = local_ - 1, inter = nodes_ - 1;
  return kind_ == Kind::kAllReduce ? 2 * intra + 2 * inter : intra + inter;
}

// Steps of 3 ops each (send, recv, wait; tag = step). All-reduce: L-1 reduce-scatter steps in the node,
// 2(M-1) ring all-reduce steps across nodes on the slice this rank owns, L-1 all-gather steps in the node.
// Reduce-scatter: L-1 steps in the node, then M-1 reduce-scatter steps across nodes on the owned slice.
// All-gather: M-1 steps across nodes gathering rail l's slice l, then L-1 all-gather steps in the node.
std::optional<RankOp> HierarchicalSchedule::op(std::uint32_t rank, std::uint64_t index) const {
  if (n_ < 2 || rank >= n_) return std::nullopt;
  const std::uint64_t L = local_, M = nodes_;
  const std::uint64_t l = rank % L, m = rank / L;
  const std::uint64_t step = index / 3, sub = index % 3;
  if (step >= steps()) return std::nullopt;
  if (sub == 2) return RankOp{};
  const auto node_right = static_cast<std::uint32_t>(m * L + (l + 1) % L);
  const auto node_left = static_cast<std::uint32_t>(m * L + (l + L - 1) % L);
  const auto rail_right = static_cast<std::uint32_t>((m + 1) % M * L + l);
  const auto rail_left = static_cast<std::uint32_t>((m + M - 1) % M * L + l);
  const std::uint64_t intra = L - 1;
  switch (kind_) {
    case Kind::kAllReduce: {
      const std::uint64_t inter = 2 * (M - 1);
      if (step < intra || step >= intra + inter) {
        const std::uint64_t s = step < intra ? step : step - inter;  // all-gather continues the ring's steps
        return ring_op(l, L, s, sub, node_right, node_left, bytes_, step);
      }
      // After the reduce-scatter, local rank l holds slice l + 1 of the node's buffer, fully reduced.
      const std::uint64_t slice = slice_bytes(bytes_, L, (l + 1) % L);
      return ring_op(m, M, step - intra, sub, rail_right, rail_left, slice, step);
    }
    case Kind::kReduceScatter: {
      if (step < intra) return ring_op(l, L, step, sub, node_right, node_left, bytes_, step);
      const std::uint64_t slice = slice_bytes(bytes_, L, (l + 1) % L);
      return ring_op(m, M, step - intra, sub, rail_right, rail_left, slice, step);
    }
    case Kind::kAllGather: {
      const std::uint64_t inter = M - 1;
      if (step < inter) {
        return ring_op(m, M, step, sub, rail_right, rail_left, slice_bytes(bytes_, L, l), step);
      }
      return ring_op(l, L, step - inter, sub, node_right, node_left, bytes_, step);
    }
  }
  return std::nullopt;
}

HierarchicalBroadcast::HierarchicalBroadcast(std::uint32_t n, std::uint32_t local, std::uint64_t bytes,
                                             std::uint64_t chunk_bytes)
    : n_(n),
      local_(local),
      nodes_(local == 0 ? 0 : n / local),
      bytes_(bytes),
      chunk_bytes_(std::max<std::uint64_t>(1, chunk_bytes)),
      chunks_(std::max<std::uint64_t>(1, (bytes + chunk_bytes_ - 1) / chunk_bytes_)) {
  if (local == 0 || n == 0 || n % local != 0)
    throw std::invalid_argument(
        "hierarchical collective: the group size must be a multiple of the node size");
}

// Per chunk c (tag c): the root posts its sends, then waits; every other rank receives from its parent,
// waits, then posts its sends (the next wait also covers them); a final wait ends every program. The
// network child comes first, so the slower send starts first.
std::optional<RankOp> HierarchicalBroadcast::op(std::uint32_t rank, std::uint64_t index) const {
  if (n_ < 2 || rank >= n_) return std::nullopt;
  const std::uint32_t L = local_, M = nodes_, l = rank % L, m = rank / L;
  std::array<std::uint32_t, 2> children{};
  std::uint64_t count = 0;
  if (l == 0 && m + 1 < M) children[count++] = rank + L;
  if (l + 1 < L) children[count++] = rank + 1;
  const bool root = rank == 0;
  const std::uint32_t parent = l > 0 ? rank - 1 : rank - L;
  const std::uint64_t per_chunk = count + (root ? 1 : 2);
  if (index >= chunks_ * per_chunk) {
    return index == chunks_ * per_chunk ? std::optional<RankOp>(RankOp{}) : std::nullopt;
  }
  const std::uint64_t c = index / per_chunk, k = index % per_chunk;
  const std::uint64_t size = bytes_ == 0 ? 0 : std::min(chunk_bytes_, bytes_ - c * chunk_bytes_);
  const auto tag = static_cast<std::uint32_t>(c);
  if (root) {
    if (k < count) return RankOp{OpKind::kSend, children[k], size, tag};
    return RankOp{};
  }
  if (k == 0) return RankOp{OpKind::kRecv, parent, size, tag};
  if (k == 1) return RankOp{};
  return RankOp{OpKind::kSend, children[k - 2], size, tag};
}

}  // namespace warpsim::cluster
