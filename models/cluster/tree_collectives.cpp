// Double binary tree all-reduce and broadcast schedules (see tree_collectives.hpp).
#include "models/cluster/tree_collectives.hpp"

#include <algorithm>
#include <stdexcept>

namespace warpsim::cluster {

namespace {

std::uint32_t top_child(std::uint32_t n) {  // highest power of two <= n - 1 (n >= 2)
  std::uint32_t h = 1;
  while (std::uint64_t{h} * 2 <= n - 1) h *= 2;
  return h;
}

std::int64_t parent_of(std::uint32_t n, std::uint32_t p) {
  if (p == 0) return -1;
  if (p == top_child(n)) return 0;
  const std::uint32_t b = p & (~p + 1);
  const std::uint64_t up = std::uint64_t{p ^ b} | (std::uint64_t{b} << 1);
  // Beyond the last position, the subtree was cut: hang on the next ancestor to the left.
  return up < n ? static_cast<std::int64_t>(up) : static_cast<std::int64_t>(p ^ b);
}

}  // namespace

TreeLinks binary_tree_links(std::uint32_t n, std::uint32_t p) {
  TreeLinks links;
  if (n < 2 || p >= n) return links;
  links.parent = parent_of(n, p);
  if (p == 0) {
    links.children[0] = top_child(n);
    return links;
  }
  std::size_t found = 0;
  const std::uint32_t b = p & (~p + 1);
  for (std::uint32_t d = b / 2; d >= 1 && found < 2; d /= 2) {
    if (parent_of(n, p - d) == p) links.children[found++] = p - d;
    if (found < 2 && std::uint64_t{p} + d < n && parent_of(n, p + d) == p) links.children[found++] = p + d;
  }
  return links;
}

std::uint32_t tree_position(std::uint32_t n, std::uint32_t tree, std::uint32_t rank) {
  if (tree == 0) return rank;
  return n % 2 == 0 ? n - 1 - rank : (rank + 1) % n;
}

std::uint32_t tree_rank(std::uint32_t n, std::uint32_t tree, std::uint32_t position) {
  if (tree == 0) return position;
  return n % 2 == 0 ? n - 1 - position : (position + n - 1) % n;
}

std::uint32_t binary_tree_depth(std::uint32_t n) {
  std::uint32_t depth = 0;
  for (std::uint32_t p = 1; p < n; ++p) {
    std::uint32_t d = 0;
    for (std::int64_t q = p; q > 0; q = parent_of(n, static_cast<std::uint32_t>(q))) ++d;
    depth = std::max(depth, d);
  }
  return depth;
}

TreeAllReduce::TreeAllReduce(std::uint32_t n, std::uint64_t bytes, std::uint64_t chunk_bytes)
    : n_(n),
      half_{slice_bytes(bytes, 2, 0), slice_bytes(bytes, 2, 1)},
      chunk_bytes_(std::max<std::uint64_t>(1, chunk_bytes)) {
  if (n == 0) throw std::invalid_argument("tree all-reduce: empty group");
  chunks_ = std::max<std::uint64_t>(1, (half_[0] + chunk_bytes_ - 1) / chunk_bytes_);
  depth_ = binary_tree_depth(n);
}

std::uint64_t TreeAllReduce::chunk_size(std::uint32_t tree, std::uint64_t chunk) const {
  const std::uint64_t start = chunk * chunk_bytes_;
  return start >= half_[tree] ? 0 : std::min(chunk_bytes_, half_[tree] - start);
}

static std::uint32_t depth_in_tree(std::uint32_t n, std::uint32_t position) {
  std::uint32_t d = 0;
  for (std::int64_t q = position; q > 0; q = parent_of(n, static_cast<std::uint32_t>(q))) ++d;
  return d;
}

// What one tree asks of a rank in one slot: receives (children when reducing, the parent when
// broadcasting) and sends (the other way).
struct TreeRole {
  std::array<std::uint32_t, 2> from{}, to{};
  std::uint64_t receives = 0, sends = 0;
};

// Op `i` of a phase. Tree t's stage for chunk c sits at slot c + off[t]; a slot posts the receives of its
// active trees (A, then B), waits once, then posts their sends; empty slots are skipped.
struct SlotOp {
  RankOp op;
  std::uint32_t tree = 0;
  std::uint64_t chunk = 0;
};
static SlotOp locate(std::uint64_t i, const std::array<std::uint64_t, 2>& off,
                     const std::array<TreeRole, 2>& role, std::uint64_t chunks) {
  std::array<std::uint64_t, 4> b{off[0], off[0] + chunks, off[1], off[1] + chunks};
  std::sort(b.begin(), b.end());
  for (std::size_t j = 0; j + 1 < b.size(); ++j) {
    const std::uint64_t lo = b[j], hi = b[j + 1];
    std::array<bool, 2> active{};
    std::uint64_t receives = 0, content = 1;
    for (std::uint32_t t = 0; t < 2; ++t) {
      active[t] = off[t] <= lo && lo < off[t] + chunks;
      if (!active[t]) continue;
      receives += role[t].receives;
      content += role[t].receives + role[t].sends;
    }
    if (lo == hi || (!active[0] && !active[1])) continue;
    if (i >= (hi - lo) * content) {
      i -= (hi - lo) * content;
      continue;
    }
    const std::uint64_t slot = lo + i / content;
    std::uint64_t k = i % content;
    if (k == receives) return {};  // the slot's wait
    const bool sending = k > receives;
    if (sending) k -= receives + 1;
    for (std::uint32_t t = 0; t < 2; ++t) {
      if (!active[t]) continue;
      const std::uint64_t count = sending ? role[t].sends : role[t].receives;
      if (k < count) {
        SlotOp out;
        out.op.kind = sending ? OpKind::kSend : OpKind::kRecv;
        out.op.peer = sending ? role[t].to[k] : role[t].from[k];
        out.tree = t;
        out.chunk = slot - off[t];
        return out;
      }
      k -= count;
    }
    throw std::logic_error("tree all-reduce: slot layout");
  }
  throw std::logic_error("tree all-reduce: op index beyond the phase");
}

// Ops of a phase: every chunk's receives and sends of both trees, plus one wait per non-empty slot.
static std::uint64_t phase_ops(const std::array<std::uint64_t, 2>& off, const std::array<TreeRole, 2>& role,
                               std::uint64_t chunks) {
  const std::uint64_t first = std::min(off[0], off[1]), last = std::max(off[0], off[1]) + chunks;
  std::uint64_t slots = last - first;
  const std::uint64_t gap = std::max(off[0], off[1]) - std::min(off[0], off[1]);
  if (gap > chunks) slots -= gap - chunks;
  return slots + chunks * (role[0].receives + role[0].sends + role[1].receives + role[1].sends);
}

// Two phases, then a final wait. Reduce: per tree and chunk, receive from the tree's children, then send
// to the parent; broadcast: receive from the parent, then send to the children. A single wait covers
// everything posted, and a rank can be the other's parent in tree A and its child in tree B, so stages
// are skewed by tree level: in the reduce phase a rank at depth d handles chunk c at slot c + 2(depth - d),
// in the broadcast phase at slot c + 2d. A child's send then always sits two slots before its parent's
// wait for it, so every wait depends only on earlier slots (no deadlock, no stall across the trees), the
// data has arrived when the wait comes (the second slot hides the hop latency), and both trees' sends of a
// slot leave together: the steady state moves one chunk per tree per slot.
std::optional<RankOp> TreeAllReduce::op(std::uint32_t rank, std::uint64_t index) const {
  if (n_ < 2 || rank >= n_) return std::nullopt;
  std::array<TreeRole, 2> up{}, down{};
  std::array<std::uint64_t, 2> depth{};
  for (std::uint32_t t = 0; t < 2; ++t) {
    const std::uint32_t position = tree_position(n_, t, rank);
    const TreeLinks links = binary_tree_links(n_, position);
    depth[t] = depth_in_tree(n_, position);
    for (const std::int64_t c : links.children) {
      if (c < 0) continue;
      const std::uint32_t child = tree_rank(n_, t, static_cast<std::uint32_t>(c));
      up[t].from[up[t].receives++] = child;
      down[t].to[down[t].sends++] = child;
    }
    if (links.parent >= 0) {
      const std::uint32_t parent = tree_rank(n_, t, static_cast<std::uint32_t>(links.parent));
      up[t].to[up[t].sends++] = parent;
      down[t].from[down[t].receives++] = parent;
    }
  }
  const std::array<std::uint64_t, 2> up_off{2 * (depth_ - depth[0]), 2 * (depth_ - depth[1])};
  const std::array<std::uint64_t, 2> down_off{2 * depth[0], 2 * depth[1]};
  const std::uint64_t reduce_ops = phase_ops(up_off, up, chunks_),
                      broadcast_ops = phase_ops(down_off, down, chunks_);
  if (index >= reduce_ops + broadcast_ops) {
    return index == reduce_ops + broadcast_ops ? std::optional<RankOp>(RankOp{}) : std::nullopt;
  }
  const bool reduce = index < reduce_ops;
  SlotOp where =
      reduce ? locate(index, up_off, up, chunks_) : locate(index - reduce_ops, down_off, down, chunks_);
  if (where.op.kind != OpKind::kWait) {
    where.op.bytes = chunk_size(where.tree, where.chunk);
    where.op.tag = static_cast<std::uint32_t>((where.chunk * 2 + where.tree) * 2 + (reduce ? 0 : 1));
  }
  return where.op;
}

TreeBroadcast::TreeBroadcast(std::uint32_t n, std::uint64_t bytes, std::uint64_t chunk_bytes)
    : n_(n),
      half_{slice_bytes(bytes, 2, 0), slice_bytes(bytes, 2, 1)},
      chunk_bytes_(std::max<std::uint64_t>(1, chunk_bytes)) {
  if (n == 0) throw std::invalid_argument("tree broadcast: empty group");
  chunks_ = std::max<std::uint64_t>(1, (half_[0] + chunk_bytes_ - 1) / chunk_bytes_);
}

std::uint64_t TreeBroadcast::chunk_size(std::uint32_t tree, std::uint64_t chunk) const {
  const std::uint64_t start = chunk * chunk_bytes_;
  return start >= half_[tree] ? 0 : std::min(chunk_bytes_, half_[tree] - start);
}

// One phase like the all-reduce's broadcast phase: a rank at (effective) depth d handles chunk c of a tree
// at slot c + 2d, receiving from its parent, waiting, then sending to its children. In tree B rank 0 is the
// virtual parent of the root (depth 0, sending only) and every other rank sits one level deeper than its
// position's depth, so a send still sits two slots before the receiving rank's wait for it.
std::optional<RankOp> TreeBroadcast::op(std::uint32_t rank, std::uint64_t index) const {
  if (n_ < 2 || rank >= n_) return std::nullopt;
  std::array<TreeRole, 2> down{};
  std::array<std::uint64_t, 2> off{};
  const TreeLinks a = binary_tree_links(n_, rank);
  if (a.parent >= 0) down[0].from[down[0].receives++] = static_cast<std::uint32_t>(a.parent);
  for (const std::int64_t c : a.children) {
    if (c >= 0) down[0].to[down[0].sends++] = static_cast<std::uint32_t>(c);
  }
  off[0] = 2 * depth_in_tree(n_, rank);
  if (rank == 0) {
    down[1].to[down[1].sends++] = tree_rank(n_, 1, 0);
  } else {
    const std::uint32_t position = tree_position(n_, 1, rank);
    const TreeLinks b = binary_tree_links(n_, position);
    down[1].from[down[1].receives++] =
        b.parent < 0 ? 0u : tree_rank(n_, 1, static_cast<std::uint32_t>(b.parent));
    for (const std::int64_t c : b.children) {
      if (c < 0) continue;
      const std::uint32_t child = tree_rank(n_, 1, static_cast<std::uint32_t>(c));
      if (child != 0) down[1].to[down[1].sends++] = child;
    }
    off[1] = 2 * (depth_in_tree(n_, position) + 1);
  }
  const std::uint64_t ops = phase_ops(off, down, chunks_);
  if (index >= ops) return index == ops ? std::optional<RankOp>(RankOp{}) : std::nullopt;
  SlotOp where = locate(index, off, down, chunks_);
  if (where.op.kind != OpKind::kWait) {
    where.op.bytes = chunk_size(where.tree, where.chunk);
    where.op.tag = static_cast<std::uint32_t>(where.chunk * 2 + where.tree);
  }
  return where.op;
}

}  // namespace warpsim::cluster
