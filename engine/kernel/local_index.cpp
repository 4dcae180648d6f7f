// Local LP index construction (see local_index.hpp).
#include "engine/kernel/local_index.hpp"

#include <bit>

namespace warpsim {

void LocalIndex::build(std::span<const LpId> ids) {
  keys_.clear();
  values_.clear();
  first_ = ids.empty() ? 0 : ids.front();
  contiguous_ = ids.empty() || ids.back() - ids.front() + 1 == ids.size();
  if (contiguous_) return;
  const std::size_t slots = std::bit_ceil(ids.size() * 2);
  mask_ = slots - 1;
  keys_.assign(slots, kNil);
  values_.assign(slots, 0);
  for (std::uint32_t local = 0; local < ids.size(); ++local) {
    std::size_t i = hash(ids[local]) & mask_;
    while (keys_[i] != kNil) i = (i + 1) & mask_;
    keys_[i] = ids[local];
    values_[i] = local;
  }
}

}  // namespace warpsim
