// Event storage: fixed-stride slots (header + model payload) in chunks that never move, addressed by
// 32-bit index. Grows on demand, so no run needs a pool size guessed up front; freed slots are reused LIFO
// (cache-warm).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/event.hpp"

namespace warpsim {

class EventPool {
 public:
  explicit EventPool(std::size_t payload_bytes);

  std::uint32_t allocate();
  void release(std::uint32_t index);

  EventHeader& at(std::uint32_t index) {
    return *reinterpret_cast<EventHeader*>(chunks_[index >> kChunkShift].get() +
                                           (index & kChunkMask) * stride_);
  }

  std::size_t stride() const { return stride_; }
  std::size_t payload_bytes() const { return payload_bytes_; }
  std::size_t live() const { return live_; }
  std::size_t peak_live() const { return peak_live_; }
  std::size_t reserved_bytes() const { return chunks_.size() * kChunkSize * stride_; }

 private:
  static constexpr unsigned kChunkShift = 12;
  static constexpr std::size_t kChunkSize = std::size_t{1} << kChunkShift;
  static constexpr std::uint32_t kChunkMask = kChunkSize - 1;

  std::size_t payload_bytes_;
  std::size_t stride_;
  std::vector<std::unique_ptr<std::byte[]>> chunks_;
  std::uint32_t free_head_ = kNil;
  std::uint32_t next_unused_ = 0;
  std::size_t live_ = 0;
  std::size_t peak_live_ = 0;
};

}  // namespace warpsim
