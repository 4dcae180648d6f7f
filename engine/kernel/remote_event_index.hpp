// Finds a received remote event by its sender identity (src LP, order) when its anti-message arrives.
// Open addressing with linear probing and backward-shift deletion: no tombstones, no per-entry allocation.
// Only events that crossed ranks are indexed, so the table is sized by in-flight remote traffic.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/event.hpp"

namespace warpsim {

class RemoteEventIndex {
 public:
  RemoteEventIndex() { rehash(1024); }

  void insert(LpId src, std::uint64_t order, std::uint32_t index);
  // Returns the pool index, or kNil when absent.
  std::uint32_t find(LpId src, std::uint64_t order) const;
  void erase(LpId src, std::uint64_t order);
  std::size_t size() const { return size_; }

 private:
  struct Slot {
    std::uint64_t order;
    LpId src;
    std::uint32_t index;  // kNil = empty
  };
  static std::size_t hash(LpId src, std::uint64_t order) {
    std::uint64_t h = (order ^ (std::uint64_t{src} << 32 | src)) * 0x9E3779B97F4A7C15ull;
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
  std::size_t locate(LpId src, std::uint64_t order) const;
  void rehash(std::size_t slots);

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace warpsim
