// Per-rank pending-event set: a two-tier "bucketed heap" (a ladder queue with one rung).
// The near future lives in a small 4-ary min-heap of (key, pool index) entries; later events are appended
// unsorted to fixed-width time buckets, and the far future to an overflow list. A bucket is heapified only
// when simulated time reaches it, so the heap stays cache-sized however many events are pending (PDES
// benchmarks with 1M LPs keep 1M events pending). Bucket width adapts at each rebuild to the spread of the
// pending events. Ordering is exact: the heap holds every event below `heap_end_`, buckets partition the
// times above it. Cancelled events are removed lazily by the kernel.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/event.hpp"

namespace warpsim {

struct PendingEntry {
  SimTime time;
  std::uint64_t order;
  LpId src;
  std::uint32_t index;
  LpId dst;  // lets the kernel prefetch the next event's LP before it touches the event

  bool before(const PendingEntry& o) const {
    if (time != o.time) return time < o.time;
    if (order != o.order) return order < o.order;
    return src < o.src;
  }
};

// Implicit 4-ary min-heap; a 4-ary layout halves the depth of a binary heap and keeps siblings together.
class EntryHeap {
 public:
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const PendingEntry& top() const { return heap_.front(); }
  std::size_t capacity_bytes() const { return heap_.capacity() * sizeof(PendingEntry); }

  void push(const PendingEntry& entry) {
    std::size_t hole = heap_.size();
    heap_.push_back(entry);
    sift_up(hole, entry);
  }

  void pop() {
    PendingEntry last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(0, last);
  }

  // Replaces the contents with `entries` (swapped in, so the caller gets the old storage back) and heapifies.
  void assign(std::vector<PendingEntry>& entries) {
    heap_.swap(entries);
    entries.clear();
    if (heap_.size() < 2) return;
    for (std::size_t i = (heap_.size() - 2) / kArity + 1; i-- > 0;) sift_down(i, heap_[i]);
  }

 private:
  static constexpr std::size_t kArity = 4;

  void sift_up(std::size_t hole, const PendingEntry& entry) {
    while (hole > 0) {
      std::size_t parent = (hole - 1) / kArity;
      if (!entry.before(heap_[parent])) break;
      heap_[hole] = heap_[parent];
      hole = parent;
    }
    heap_[hole] = entry;
  }

  void sift_down(std::size_t hole, PendingEntry entry) {
    const std::size_t n = heap_.size();
    for (;;) {
      std::size_t first = hole * kArity + 1;
      if (first >= n) break;
      std::size_t best = first;
      std::size_t end = std::min(first + kArity, n);
      for (std::size_t c = first + 1; c < end; ++c) {
        if (heap_[c].before(heap_[best])) best = c;
      }
      if (!heap_[best].before(entry)) break;
      heap_[hole] = heap_[best];
      hole = best;
    }
    heap_[hole] = entry;
  }

  std::vector<PendingEntry> heap_;
};

class PendingQueue {
 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  const PendingEntry& top() const { return heap_.top(); }
  std::size_t capacity_bytes() const;

  void push(const PendingEntry& entry) {
    ++size_;
    if (entry.time < heap_end_ || heap_unbounded_) {
      heap_.push(entry);
      return;
    }
    if (entry.time < ring_end_) {
      buckets_[cursor_ + (entry.time - heap_end_) / width_].push_back(entry);
    } else {
      overflow_.push_back(entry);
    }
    if (heap_.empty()) refill();
  }

  void pop() {
    heap_.pop();
    --size_;
    if (heap_.empty() && size_ > 0) refill();
  }

 private:
  static constexpr std::size_t kTargetPerBucket = 48;
  static constexpr std::size_t kMaxBuckets = std::size_t{1} << 20;

  void refill();
  void rebuild_from_overflow();

  EntryHeap heap_;
  std::vector<std::vector<PendingEntry>> buckets_;
  std::vector<PendingEntry> overflow_;
  std::size_t active_buckets_ = 0;  // buckets in use since the last rebuild (buckets_ may hold spares)
  std::size_t cursor_ = 0;          // next bucket to move into the heap; bucket i covers
                                    // [heap_end_ + (i - cursor_) * width_, ... + width_)
  SimTime heap_end_ = 0;            // every event below this is in the heap
  bool heap_unbounded_ = false;     // the heap holds events at kTimeInfinity too, so it takes every push
  SimTime ring_end_ = 0;            // events at or above this are in overflow_
  SimTime width_ = 1;
  std::size_t size_ = 0;
};

}  // namespace warpsim
