// Bucketed pending queue: refilling the heap from the next bucket, and re-bucketing the overflow list.
#include "engine/kernel/pending_queue.hpp"

namespace warpsim {

std::size_t PendingQueue::capacity_bytes() const {
  std::size_t bytes = heap_.capacity_bytes() + overflow_.capacity() * sizeof(PendingEntry);
  for (const auto& b : buckets_) bytes += b.capacity() * sizeof(PendingEntry);
  return bytes + buckets_.capacity() * sizeof(buckets_[0]);
}

void PendingQueue::refill() {
  while (heap_.empty()) {
    if (cursor_ >= active_buckets_) {
      if (overflow_.empty()) return;
      rebuild_from_overflow();
      continue;
    }
    heap_end_ = (cursor_ + 1 == active_buckets_) ? ring_end_ : heap_end_ + width_;
    heap_.assign(buckets_[cursor_]);
    // The slot now holds the heap's old storage; a consumed slot must not keep it, or every consumed
    // bucket would pin a heap-sized buffer until the next rebuild.
    std::vector<PendingEntry>().swap(buckets_[cursor_]);
    ++cursor_;
  }
}

void PendingQueue::rebuild_from_overflow() {
  SimTime lo = overflow_.front().time, hi = lo;
  for (const auto& e : overflow_) {
    lo = std::min(lo, e.time);
    hi = std::max(hi, e.time);
  }
  const std::size_t count = overflow_.size();
  std::size_t nbuckets = std::min(kMaxBuckets, count / kTargetPerBucket + 1);
  const unsigned __int128 span = static_cast<unsigned __int128>(hi - lo) + 1;
  const unsigned __int128 width = (span + nbuckets - 1) / nbuckets;
  width_ = width > kTimeInfinity ? kTimeInfinity : static_cast<SimTime>(width);
  const unsigned __int128 end =
      static_cast<unsigned __int128>(lo) + static_cast<unsigned __int128>(width_) * nbuckets;
  ring_end_ = end > kTimeInfinity ? kTimeInfinity : static_cast<SimTime>(end);
  // Buckets keep modest capacity between rebuilds (fewer reallocations) but give back anything large:
  // vectors rotate between the heap and the buckets, and kept capacity would otherwise accumulate.
  buckets_.resize(nbuckets);
  for (auto& bucket : buckets_) {
    if (bucket.capacity() > 4 * kTargetPerBucket) {
      std::vector<PendingEntry>().swap(bucket);
    } else {
      bucket.clear();
    }
  }
  heap_end_ = lo;
  heap_unbounded_ = false;
  cursor_ = 0;
  std::size_t kept = 0;
  for (const auto& e : overflow_) {
    if (e.time < ring_end_) {
      buckets_[(e.time - lo) / width_].push_back(e);
    } else {
      overflow_[kept++] = e;  // only kTimeInfinity-saturated times can land here
    }
  }
  overflow_.resize(kept);
  active_buckets_ = nbuckets;
  if (kept == count) {
    // Every event sits at the saturated end of time: no bucket can hold them, so the heap takes them all.
    heap_end_ = kTimeInfinity;
    heap_unbounded_ = true;
    active_buckets_ = 0;
    heap_.assign(overflow_);
  }
}

}  // namespace warpsim
