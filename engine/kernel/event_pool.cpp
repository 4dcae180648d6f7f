// Event pool implementation (see event_pool.hpp).
#include "engine/kernel/event_pool.hpp"

#include <stdexcept>

namespace warpsim {

EventPool::EventPool(std::size_t payload_bytes)
    : payload_bytes_(payload_bytes), stride_((sizeof(EventHeader) + payload_bytes + 7) / 8 * 8) {}

std::uint32_t EventPool::allocate() {
  std::uint32_t index;
  if (free_head_ != kNil) {
    index = free_head_;
    free_head_ = at(index).next;
  } else {
    if (next_unused_ == kNil) throw std::length_error("event pool exhausted 2^32 slots");
    if ((next_unused_ >> kChunkShift) >= chunks_.size()) {
      chunks_.push_back(std::make_unique_for_overwrite<std::byte[]>(kChunkSize * stride_));
    }
    index = next_unused_++;
  }
  if (++live_ > peak_live_) peak_live_ = live_;
  return index;
}

void EventPool::release(std::uint32_t index) {
  EventHeader& event = at(index);
  event.state = EventState::kFree;
  event.next = free_head_;
  free_head_ = index;
  --live_;
}

}  // namespace warpsim
