// Remote event index implementation (see remote_event_index.hpp).
#include "engine/kernel/remote_event_index.hpp"

namespace warpsim {

std::size_t RemoteEventIndex::locate(LpId src, std::uint64_t order) const {
  std::size_t i = hash(src, order) & mask_;
  while (slots_[i].index != kNil && (slots_[i].src != src || slots_[i].order != order)) i = (i + 1) & mask_;
  return i;
}

void RemoteEventIndex::insert(LpId src, std::uint64_t order, std::uint32_t index) {
  if ((size_ + 1) * 2 > slots_.size()) rehash(slots_.size() * 2);
  const std::size_t i = locate(src, order);
  if (slots_[i].index == kNil) ++size_;
  slots_[i] = Slot{order, src, index};
}

std::uint32_t RemoteEventIndex::find(LpId src, std::uint64_t order) const {
  return slots_[locate(src, order)].index;
}

void RemoteEventIndex::erase(LpId src, std::uint64_t order) {
  std::size_t hole = locate(src, order);
  if (slots_[hole].index == kNil) return;
  --size_;
  // Backward-shift: move later members of the probe run into the hole so lookups never need tombstones.
  std::size_t i = hole;
  for (;;) {
    i = (i + 1) & mask_;
    if (slots_[i].index == kNil) break;
    const std::size_t home = hash(slots_[i].src, slots_[i].order) & mask_;
    const bool movable = (i > hole) ? (home <= hole || home > i) : (home <= hole && home > i);
    if (movable) {
      slots_[hole] = slots_[i];
      hole = i;
    }
  }
  slots_[hole].index = kNil;
}

void RemoteEventIndex::rehash(std::size_t slots) {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(slots, Slot{0, 0, kNil});
  mask_ = slots - 1;
  size_ = 0;
  for (const Slot& s : old) {
    if (s.index != kNil) insert(s.src, s.order, s.index);
  }
}

}  // namespace warpsim
