// A fixed-size, zero-initialized array of doubles for large, long-lived grids (the SeriesRecorder's sample
// blocks). Large buffers come straight from the kernel (already zero, so no memset) on 2 MiB boundaries
// with transparent huge pages requested: a growing grid of tens of MB then takes a few dozen page faults
// instead of thousands, which matters on virtual machines where faults are expensive. Small ones use calloc.
// populate_async() takes even those faults off the caller's thread: a buffer allocated one step ahead of need
// is faulted in by a background thread while the caller goes on (the recorder keeps one such spare block).
#pragma once

#include <cstddef>
#include <thread>

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
  // Faults the pages in (zeroed, writable) on a background thread, so that the first writes do not stop for
  // page faults. MADV_POPULATE_WRITE never writes data, so the owner may use the buffer at once; a kernel
  // without it (before Linux 5.14) simply leaves the faults to the first writes. No-op for small buffers.
  void populate_async();

 private:
  void release() noexcept;

  double* data_ = nullptr;
  std::size_t count_ = 0;
  void* mapping_ = nullptr;  // the mmap()ed region (null: data_ is from calloc)
  std::size_t mapped_bytes_ = 0;
  std::thread populating_;  // joined before the mapping goes away
};

}  // namespace warpsim
