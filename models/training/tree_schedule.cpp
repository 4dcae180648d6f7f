// Padded, memoized tree all-reduce schedules (see tree_schedule.hpp).
#include "models/training/tree_schedule.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <vector>

namespace warpsim::training {

TreeSchedule::TreeSchedule(std::uint32_t n, std::uint64_t bytes, std::uint64_t chunk_bytes,
                           std::uint32_t per_node)
    : n_(n),
      per_node_(per_node),
      bytes_(bytes),
      chunk_bytes_(chunk_bytes),
      tree_(n, bytes, chunk_bytes, per_node) {
  for (std::uint32_t r = 0; r < n_; ++r) padded_ = std::max(padded_, ops(r));
}

std::uint64_t TreeSchedule::ops(std::uint32_t rank) const {
  if (rank >= n_ || !tree_.op(rank, 0)) return 0;
  // op(rank, i) is defined exactly for i < length: find the length by doubling, then bisection.
  std::uint64_t lo = 1, hi = 2;  // op(lo - 1) exists; hi is the first probe
  while (tree_.op(rank, hi - 1)) {
    lo = hi;
    hi *= 2;
  }
  while (hi - lo > 1) {  // invariant: op(lo - 1) exists, op(hi - 1) does not
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if (tree_.op(rank, mid - 1))
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

cluster::RankOp TreeSchedule::op(std::uint32_t rank, std::uint64_t index) const {
  if (index >= padded_) throw std::logic_error("tree schedule: op index beyond the padded count");
  const auto o = tree_.op(rank, index);
  return o ? *o : cluster::RankOp{};  // padding: a Wait with nothing outstanding
}

const TreeSchedule& tree_schedule(std::uint32_t n, std::uint64_t bytes, std::uint64_t chunk_bytes,
                                  std::uint32_t per_node) {
  // A step has a few distinct sizes (full buckets, the last bucket, per stage); the cap only guards
  // against pathological specs with many distinct sizes, which then rebuild schedules instead of growing.
  constexpr std::size_t kMaxMemo = 64;
  thread_local std::vector<std::unique_ptr<TreeSchedule>> memo;
  for (const auto& s : memo) {
    if (s->members() == n && s->bytes() == bytes && s->chunk_bytes() == chunk_bytes &&
        s->per_node() == per_node)
      return *s;
  }
  if (memo.size() >= kMaxMemo) memo.clear();
  memo.push_back(std::make_unique<TreeSchedule>(n, bytes, chunk_bytes, per_node));
  return *memo.back();
}

}  // namespace warpsim::training
