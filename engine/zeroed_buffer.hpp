// A fixed-size, zero-initialized array of doubles for large, long-lived grids (the SeriesRecorder's sample
// blocks). Large buffers come straight from the kernel (already zero, so no memset) on 2 MiB boundaries
// with transparent huge pages requested: a growing grid of tens of MB then takes a few dozen page faults
// instead of thousands, which matters on virtual machines where faults are expensive. Small ones use calloc.
#pragma once

#include <cstddef>

namespace warpsim {

class ZeroedBuffer {
 public:
  ZeroedBuffer() = default;
  explicit ZeroedBuffer(std::size_t count);  // throws std::bad_alloc
  ~ZeroedBuffer();
  ZeroedBuffer(ZeroedBuffer&& other) noexcept;
  ZeroedBuffer& operator=(ZeroedBuffer&& other) noexcept;
  ZeroedBuffer(const ZeroedBuffer&) = delete;
  ZeroedBuffer& operator=(const ZeroedBuffer&) = delete;

  double* data() { return data_; }
  const double* data() const { return data_; }
  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }

 private:
  void release() noexcept;

  double* data_ = nullptr;
  std::size_t count_ = 0;
  void* mapping_ = nullptr;  // the mmap()ed region (null: data_ is from calloc)
  std::size_t mapped_bytes_ = 0;
};

}  // namespace warpsim
