// Zero-initialized double arrays, huge-page backed when large (see zeroed_buffer.hpp).
#include "engine/zeroed_buffer.hpp"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <new>
#include <utility>

namespace warpsim {

namespace {
constexpr std::size_t kHugePage = std::size_t{2} << 20;
// The bytes a large buffer's data occupy, rounded up to whole huge pages (its mapping has one page more, for
// the alignment).
std::size_t huge_page_bytes(std::size_t count) {
  return (count * sizeof(double) + kHugePage - 1) / kHugePage * kHugePage;
}
}  // namespace

ZeroedBuffer::ZeroedBuffer(std::size_t count) : count_(count) {
  if (count == 0) return;
  const std::size_t bytes = count * sizeof(double);
  if (bytes < kHugePage) {
    data_ = static_cast<double*>(std::calloc(count, sizeof(double)));
    if (data_ == nullptr) throw std::bad_alloc();
    return;
  }
  // Anonymous mappings are zero-filled; over-allocate by one huge page to align the start.
  const std::size_t rounded = huge_page_bytes(count);
  mapped_bytes_ = rounded + kHugePage;
  mapping_ = mmap(nullptr, mapped_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapping_ == MAP_FAILED) {
    mapping_ = nullptr;
    throw std::bad_alloc();
  }
  const auto at = reinterpret_cast<std::uintptr_t>(mapping_);
  const std::uintptr_t aligned = (at + kHugePage - 1) / kHugePage * kHugePage;
  data_ = reinterpret_cast<double*>(aligned);
  // Huge pages only where the data fill whole ones (only a request: without transparent huge pages this is
  // ordinary 4 KiB memory, still correct). A huge page for the tail would be faulted in, and zeroed, whole
  // for the part of it the data use: a 2.6 MB block cost 4 MiB of page zeroing. The tail stays in 4 KiB
  // pages, faulted as far as it is written.
  const std::size_t whole = bytes / kHugePage * kHugePage;
  if (whole != 0) madvise(data_, whole, MADV_HUGEPAGE);
  if (rounded != whole) madvise(reinterpret_cast<char*>(data_) + whole, rounded - whole, MADV_NOHUGEPAGE);
}

ZeroedBuffer::~ZeroedBuffer() {
  release();
}

void ZeroedBuffer::populate_async() {
  if (mapping_ == nullptr || populating_.joinable()) return;
  // The data's own pages (the tail's 4 KiB pages included), not the rest of the last huge page.
  constexpr std::size_t kPage = 4096;
  const std::size_t bytes = (count_ * sizeof(double) + kPage - 1) / kPage * kPage;
#ifdef MADV_POPULATE_WRITE
  populating_ = std::thread([start = data_, bytes] { madvise(start, bytes, MADV_POPULATE_WRITE); });
#else
  (void)bytes;
#endif
}

ZeroedBuffer::ZeroedBuffer(ZeroedBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      count_(std::exchange(other.count_, 0)),
      mapping_(std::exchange(other.mapping_, nullptr)),
      mapped_bytes_(std::exchange(other.mapped_bytes_, 0)),
      populating_(std::move(other.populating_)) {}

ZeroedBuffer& ZeroedBuffer::operator=(ZeroedBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    count_ = std::exchange(other.count_, 0);
    mapping_ = std::exchange(other.mapping_, nullptr);
    mapped_bytes_ = std::exchange(other.mapped_bytes_, 0);
    populating_ = std::move(other.populating_);
  }
  return *this;
}

void ZeroedBuffer::release() noexcept {
  if (populating_.joinable()) populating_.join();
  if (mapping_ != nullptr) {
    munmap(mapping_, mapped_bytes_);
  } else {
    std::free(data_);
  }
  data_ = nullptr;
  count_ = 0;
  mapping_ = nullptr;
  mapped_bytes_ = 0;
}

}  // namespace warpsim
