// Per-rank pending-event set: an implicit 4-ary min-heap of (key, pool index) entries.
// Keys live in the heap entries themselves, so sifting never touches event memory; a 4-ary layout halves
// the tree depth of a binary heap and keeps each node's children in one or two cache lines.
// Cancelled events are removed lazily (the kernel skips them when they surface).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/event.hpp"

namespace warpsim {

struct PendingEntry {
  SimTime time;
  std::uint64_t order;
  LpId src;
  std::uint32_t index;

  bool before(const PendingEntry& o) const {
    if (time != o.time) return time < o.time;
    if (order != o.order) return order < o.order;
    return src < o.src;
  }
};

class PendingQueue {
 public:
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const PendingEntry& top() const { return heap_.front(); }
  std::size_t capacity_bytes() const { return heap_.capacity() * sizeof(PendingEntry); }

  void push(const PendingEntry& entry) {
    std::size_t hole = heap_.size();
    heap_.push_back(entry);
    while (hole > 0) {
      std::size_t parent = (hole - 1) / kArity;
      if (!entry.before(heap_[parent])) break;
      heap_[hole] = heap_[parent];
      hole = parent;
    }
    heap_[hole] = entry;
  }

  void pop() {
    PendingEntry last = heap_.back();
    heap_.pop_back();
    const std::size_t n = heap_.size();
    if (n == 0) return;
    std::size_t hole = 0;
    for (;;) {
      std::size_t first = hole * kArity + 1;
      if (first >= n) break;
      std::size_t best = first;
      std::size_t end = first + kArity < n ? first + kArity : n;
      for (std::size_t c = first + 1; c < end; ++c) {
        if (heap_[c].before(heap_[best])) best = c;
      }
      if (!heap_[best].before(last)) break;
      heap_[hole] = heap_[best];
      hole = best;
    }
    heap_[hole] = last;
  }

 private:
  static constexpr std::size_t kArity = 4;
  std::vector<PendingEntry> heap_;
};

}  // namespace warpsim
