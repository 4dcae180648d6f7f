// Block and round-robin partitions (see block_map.hpp).
#include "partition/block_map.hpp"

#include <stdexcept>
#include <string>

namespace warpsim {

namespace {
void check(std::uint64_t lp_count, int ranks) {
  if (ranks < 1) throw std::invalid_argument("ranks must be >= 1");
  if (lp_count < static_cast<std::uint64_t>(ranks)) {
    throw std::invalid_argument("more ranks (" + std::to_string(ranks) + ") than LPs (" +
                                std::to_string(lp_count) + ")");
  }
  if (lp_count > 0xffffffffull) throw std::invalid_argument("more than 2^32-1 LPs");
}
}  // namespace

BlockLpMap::BlockLpMap(std::uint64_t lp_count, int ranks) : lp_count_(lp_count), ranks_(ranks) {
  check(lp_count, ranks);
}

LpId BlockLpMap::first_of(int rank) const {
  return static_cast<LpId>(static_cast<std::uint64_t>(rank) * lp_count_ / static_cast<std::uint64_t>(ranks_));
}

int BlockLpMap::rank_of(LpId lp) const {
  // Inverse of first_of, then a correction step for the rounding of the division.
  auto r = static_cast<int>((static_cast<std::uint64_t>(lp) * ranks_ + ranks_ - 1) / lp_count_);
  while (r > 0 && first_of(r) > lp) --r;
  while (r + 1 < ranks_ && first_of(r + 1) <= lp) ++r;
  return r;
}

std::vector<LpId> BlockLpMap::lps_of(int rank) const {
  std::vector<LpId> out;
  const LpId first = first_of(rank);
  const LpId last = rank + 1 == ranks_ ? static_cast<LpId>(lp_count_) : first_of(rank + 1);
  out.reserve(last - first);
  for (LpId lp = first; lp < last; ++lp) out.push_back(lp);
  return out;
}

RoundRobinLpMap::RoundRobinLpMap(std::uint64_t lp_count, int ranks) : lp_count_(lp_count), ranks_(ranks) {
  check(lp_count, ranks);
}

std::vector<LpId> RoundRobinLpMap::lps_of(int rank) const {
  std::vector<LpId> out;
  for (std::uint64_t lp = static_cast<std::uint64_t>(rank); lp < lp_count_;
       lp += static_cast<std::uint64_t>(ranks_)) {
    out.push_back(static_cast<LpId>(lp));
  }
  return out;
}

}  // namespace warpsim
