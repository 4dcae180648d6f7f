// Maps a global LP id to its index among this rank's LPs. Contiguous ownership (block partitions) is a
// subtraction; any other partition uses an open-addressing table sized by the local LP count only.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/event.hpp"

namespace warpsim {

class LocalIndex {
 public:
  void build(std::span<const LpId> sorted_local_ids);

  std::uint32_t find(LpId lp) const {
    if (contiguous_) return lp - first_;
    std::size_t i = hash(lp) & mask_;
    while (keys_[i] != lp) i = (i + 1) & mask_;
    return values_[i];
  }

  std::size_t memory_bytes() const { return keys_.capacity() * 4 + values_.capacity() * 4; }

 private:
  static std::size_t hash(LpId lp) { return static_cast<std::size_t>(lp * 0x9E3779B97F4A7C15ull >> 20); }

  bool contiguous_ = true;
  LpId first_ = 0;
  std::size_t mask_ = 0;
  std::vector<LpId> keys_;
  std::vector<std::uint32_t> values_;
};

}  // namespace warpsim
