// Double binary tree all-reduce and broadcast schedules (see tree_collectives.hpp).
#include "models/cluster/tree_collectives.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

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

static std::uint32_t depth_in_tree(std::uint32_t n, std::uint32_t position) {
  std::uint32_t d = 0;
  for (std::int64_t q = position; q > 0; q = parent_of(n, static_cast<std::uint32_t>(q))) ++d;
  return d;
}

ChainTreeLinks chain_tree_links(std::uint32_t n, std::uint32_t per_node, std::uint32_t tree,
                                std::uint32_t rank) {
  ChainTreeLinks out;
  const std::uint32_t L = per_node, nodes = n / L, node = rank / L, local = rank % L, j = tree / 2;
  const std::uint32_t chain = (local + L - j) % L;  // position in channel j's chain j, j+1, ... (mod L)
  const auto at = [&](std::uint32_t b, std::uint32_t c) { return std::int64_t{b} * L + (j + c) % L; };
  const std::uint32_t position = tree_position(nodes, tree % 2, node);
  const TreeLinks links = binary_tree_links(nodes, position);
  std::size_t found = 0;
  if (chain + 1 < L) out.children[found++] = at(node, chain + 1);
  if (chain > 0) {
    out.parent = at(node, chain - 1);
  } else {
    if (links.parent >= 0)
      out.parent = at(tree_rank(nodes, tree % 2, static_cast<std::uint32_t>(links.parent)), 0);
    for (const std::int64_t c : links.children) {
      if (c >= 0) out.children[found++] = at(tree_rank(nodes, tree % 2, static_cast<std::uint32_t>(c)), 0);
    }
  }
  out.depth = depth_in_tree(nodes, position) + chain;
  return out;
}

TreeAllReduce::TreeAllReduce(std::uint32_t n, std::uint64_t bytes, std::uint64_t chunk_bytes,
                             std::uint32_t per_node)
    : n_(n), per_node_(per_node), bytes_(bytes), chunk_bytes_(std::max<std::uint64_t>(1, chunk_bytes)) {
  if (n == 0) throw std::invalid_argument("tree all-reduce: empty group");
  if (per_node == 0 || n % per_node != 0) {
    throw std::invalid_argument("tree all-reduce: " + std::to_string(per_node) +
                                " ranks per node do not divide the group's " + std::to_string(n));
  }
  // Tree 0 carries the largest part.
  chunks_ = std::max<std::uint64_t>(1, (slice_bytes(bytes, trees(), 0) + chunk_bytes_ - 1) / chunk_bytes_);
  depth_ = binary_tree_depth(n / per_node) + per_node - 1;
}

std::uint64_t TreeAllReduce::chunk_size(std::uint32_t tree, std::uint64_t chunk) const {
  const std::uint64_t part = slice_bytes(bytes_, trees(), tree);
  const std::uint64_t start = chunk * chunk_bytes_;
  return start >= part ? 0 : std::min(chunk_bytes_, part - start);
}

// What one tree asks of a rank in one slot: receives (children when reducing, the parent when
// broadcasting) and sends (the other way).
struct TreeRole {
  std::array<std::uint32_t, 3> from{}, to{};
  std::uint64_t receives = 0, sends = 0;
};

// A phase of one rank's schedule. Tree t's stage for chunk c sits at slot c + off[t]; a slot posts the
// receives of its active trees (in tree order), waits once, then posts their sends; empty slots are
// skipped. Between two consecutive stage starts or ends (the boundaries) the active trees are the same:
// such a run of slots is laid out once, and op `i` of the phase is found by walking the runs.
struct PhasePlan {
  struct Run {
    std::uint64_t lo = 0, hi = 0;      // slots [lo, hi)
    std::uint64_t first_op = 0;        // the phase's op index of slot lo's first op
    std::uint64_t receives = 0;        // per slot, over the active trees
    std::uint64_t content = 0;         // ops per slot: receives, the wait, sends
    std::vector<std::uint32_t> trees;  // the active trees
  };
  std::vector<std::uint64_t> off;
  std::vector<TreeRole> role;
  std::vector<Run> runs;
  std::uint64_t ops = 0;
};

static PhasePlan plan_phase(std::vector<std::uint64_t> off, std::vector<TreeRole> role,
                            std::uint64_t chunks) {
  PhasePlan plan;
  std::vector<std::uint64_t> b;
  for (const std::uint64_t o : off) {
    b.push_back(o);
    b.push_back(o + chunks);
  }
  std::sort(b.begin(), b.end());
  b.erase(std::unique(b.begin(), b.end()), b.end());
  for (std::size_t k = 0; k + 1 < b.size(); ++k) {
    PhasePlan::Run run;
    run.lo = b[k];
    run.hi = b[k + 1];
    run.content = 1;
    for (std::uint32_t t = 0; t < off.size(); ++t) {
      if (!(off[t] <= run.lo && run.lo < off[t] + chunks)) continue;
      run.trees.push_back(t);
      run.receives += role[t].receives;
      run.content += role[t].receives + role[t].sends;
    }
    if (run.trees.empty()) continue;
    run.first_op = plan.ops;
    plan.ops += (run.hi - run.lo) * run.content;
    plan.runs.push_back(std::move(run));
  }
  plan.off = std::move(off);
  plan.role = std::move(role);
  return plan;
}

// Op `i` (< plan.ops) of a phase.
struct SlotOp {
  RankOp op;
  std::uint32_t tree = 0;
  std::uint64_t chunk = 0;
};
static SlotOp locate(std::uint64_t i, const PhasePlan& plan) {
  for (const PhasePlan::Run& run : plan.runs) {
    if (i >= run.first_op + (run.hi - run.lo) * run.content) continue;
    const std::uint64_t at = i - run.first_op;
    const std::uint64_t slot = run.lo + at / run.content;
    std::uint64_t k = at % run.content;
    if (k == run.receives) return {};  // the slot's wait
    const bool sending = k > run.receives;
    if (sending) k -= run.receives + 1;
    for (const std::uint32_t t : run.trees) {
      const TreeRole& role = plan.role[t];
      const std::uint64_t count = sending ? role.sends : role.receives;
      if (k < count) {
        SlotOp out;
        out.op.kind = sending ? OpKind::kSend : OpKind::kRecv;
        out.op.peer = sending ? role.to[k] : role.from[k];
        out.tree = t;
        out.chunk = slot - plan.off[t];
        return out;
      }
      k -= count;
    }
    throw std::logic_error("tree all-reduce: slot layout");
  }
  throw std::logic_error("tree all-reduce: op index beyond the phase");
}

// A rank's phase plans, cached per thread: a simulation asks for a rank's ops one after the other,
// interleaved with other ranks', and building a plan walks the rank's trees. The key holds everything the
// plans depend on (not the schedule object, whose address a later schedule may reuse).
struct RankPlans {
  PhasePlan up, down;  // the broadcast schedule uses `down` only
};
struct PlanKey {
  std::uint32_t schedule = 0;  // 1: all-reduce, 2: broadcast (0: an empty cache slot)
  std::uint32_t n = 0, per_node = 0, rank = 0;
  std::uint64_t chunks = 0;
  bool operator==(const PlanKey&) const = default;
};
template <typename Build>
static const RankPlans& cached_plans(const PlanKey& key, Build&& build) {
  struct Slot {
    PlanKey key;
    RankPlans plans;
  };
  constexpr std::size_t kCacheSlots = 1024;
  thread_local std::vector<Slot> cache(kCacheSlots);
  Slot& slot = cache[(std::uint64_t{key.rank} * 0x9E3779B1u + std::uint64_t{key.n} * 7919 +
                      key.chunks * 104729 + key.per_node * 31 + key.schedule) %
                     kCacheSlots];
  if (!(slot.key == key)) {
    slot.plans = build();
    slot.key = key;
  }
  return slot.plans;
}

// Two phases, then a final wait. Reduce: per tree and chunk, receive from the tree's children, then send
// to the parent; broadcast: receive from the parent, then send to the children. A single wait covers
// everything posted, and a rank can be the other's parent in one tree and its child in another, so stages
// are skewed by tree level: in the reduce phase a rank at depth d handles chunk c at slot c + 2(depth - d),
// in the broadcast phase at slot c + 2d. A child's send then always sits two slots before its parent's
// wait for it, so every wait depends only on earlier slots (no deadlock, no stall across the trees), the
// data has arrived when the wait comes (the second slot hides the hop latency), and all trees' sends of a
// slot leave together: the steady state moves one chunk per tree per slot.
std::optional<RankOp> TreeAllReduce::op(std::uint32_t rank, std::uint64_t index) const {
  if (n_ < 2 || rank >= n_) return std::nullopt;
  const std::uint32_t T = trees();
  const RankPlans& c = cached_plans({1, n_, per_node_, rank, chunks_}, [&] {
    std::vector<TreeRole> up(T), down(T);
    std::vector<std::uint64_t> up_off(T), down_off(T);
    for (std::uint32_t t = 0; t < T; ++t) {
      const ChainTreeLinks links = chain_tree_links(n_, per_node_, t, rank);
      for (const std::int64_t child : links.children) {
        if (child < 0) continue;
        up[t].from[up[t].receives++] = static_cast<std::uint32_t>(child);
        down[t].to[down[t].sends++] = static_cast<std::uint32_t>(child);
      }
      if (links.parent >= 0) {
        up[t].to[up[t].sends++] = static_cast<std::uint32_t>(links.parent);
        down[t].from[down[t].receives++] = static_cast<std::uint32_t>(links.parent);
      }
      up_off[t] = 2 * (depth_ - links.depth);
      down_off[t] = 2 * links.depth;
    }
    return RankPlans{plan_phase(std::move(up_off), std::move(up), chunks_),
                     plan_phase(std::move(down_off), std::move(down), chunks_)};
  });
  const std::uint64_t reduce_ops = c.up.ops, broadcast_ops = c.down.ops;
  if (index >= reduce_ops + broadcast_ops) {
    return index == reduce_ops + broadcast_ops ? std::optional<RankOp>(RankOp{}) : std::nullopt;
  }
  const bool reduce = index < reduce_ops;
  SlotOp where = reduce ? locate(index, c.up) : locate(index - reduce_ops, c.down);
  if (where.op.kind != OpKind::kWait) {
    where.op.bytes = chunk_size(where.tree, where.chunk);
    where.op.tag = static_cast<std::uint32_t>((where.chunk * T + where.tree) * 2 + (reduce ? 0 : 1));
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
  const PhasePlan& plan =
      cached_plans({2, n_, 1, rank, chunks_}, [&] {
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
        return RankPlans{{}, plan_phase({off.begin(), off.end()}, {down.begin(), down.end()}, chunks_)};
      }).down;
  if (index >= plan.ops) return index == plan.ops ? std::optional<RankOp>(RankOp{}) : std::nullopt;
  SlotOp where = locate(index, plan);
  if (where.op.kind != OpKind::kWait) {
    where.op.bytes = chunk_size(where.tree, where.chunk);
    where.op.tag = static_cast<std::uint32_t>(where.chunk * 2 + where.tree);
  }
  return where.op;
}

}  // namespace warpsim::cluster
