// Chunk deflation in worker threads (see chunk_compressor.hpp).
#include "io/chunk_compressor.hpp"

#include <libdeflate.h>

#include <algorithm>
#include <memory>
#include <stdexcept>

namespace warpsim::io {

ChunkCompressor::ChunkCompressor(int level, unsigned threads) : level_(level) {
  if (level < 1 || level > 9) throw std::invalid_argument("ChunkCompressor: deflate level must be 1-9");
  if (threads == 0) threads = std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
  workers_.reserve(threads);
  for (unsigned i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
}

ChunkCompressor::~ChunkCompressor() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  job_ready_.notify_all();
  workers_.clear();  // joins
}

void ChunkCompressor::submit(std::size_t values, Fill fill) {
  {
    std::lock_guard lock(mutex_);
    jobs_.push_back(Job{values, std::move(fill), std::nullopt, {}});
  }
  job_ready_.notify_one();
}

std::vector<unsigned char> ChunkCompressor::next() {
  std::unique_lock lock(mutex_);
  if (returned_ >= jobs_.size()) throw std::logic_error("ChunkCompressor::next: no chunk pending");
  const std::size_t i = returned_++;
  chunk_done_.wait(lock, [&] { return jobs_[i].result.has_value() || !jobs_[i].error.empty(); });
  if (!jobs_[i].error.empty()) throw std::runtime_error(jobs_[i].error);
  std::vector<unsigned char> bytes = std::move(*jobs_[i].result);
  jobs_[i].result.reset();  // the compressed copy is the caller's now
  return bytes;
}

namespace {

struct FreeCompressor {
  void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
};

}  // namespace

void ChunkCompressor::work() {
  std::vector<double> chunk;
  // One per worker: a libdeflate compressor holds its match-finder tables and is not shared between threads.
  const std::unique_ptr<libdeflate_compressor, FreeCompressor> deflater(libdeflate_alloc_compressor(level_));
  for (;;) {
    std::size_t i = 0;
    std::size_t values = 0;
    Fill fill;
    {
      std::unique_lock lock(mutex_);
      job_ready_.wait(lock, [&] { return stopping_ || taken_ < jobs_.size(); });
      if (stopping_) return;
      i = taken_++;
      values = jobs_[i].values;
      fill = std::move(jobs_[i].fill);  // jobs_ may reallocate while this runs: work on copies
    }
    std::vector<unsigned char> out;
    std::string error;
    try {
      chunk.assign(values, 0.0);
      fill(chunk);
      if (!deflater) throw std::runtime_error("libdeflate could not allocate a compressor");
      const std::size_t in_bytes = values * sizeof(double);
      out.resize(libdeflate_zlib_compress_bound(deflater.get(), in_bytes));
      const std::size_t size =
          libdeflate_zlib_compress(deflater.get(), chunk.data(), in_bytes, out.data(), out.size());
      // The bound guarantees room, so 0 (no room) would be a libdeflate bug; say so rather than store
      // nothing.
      if (size == 0) error = "deflating a chunk failed (libdeflate found the output buffer too small)";
      out.resize(size);
    } catch (const std::exception& e) {
      error = std::string("preparing a chunk failed: ") + e.what();
    }
    {
      std::lock_guard lock(mutex_);
      if (error.empty()) {
        jobs_[i].result = std::move(out);
      } else {
        jobs_[i].error = std::move(error);
      }
    }
    chunk_done_.notify_all();
  }
}

}  // namespace warpsim::io
