// Deflates dataset chunks in worker threads and hands them back in submission order. The one-rank series
// write (plain POSIX HDF5 driver) fills and compresses its chunks here, on every core of the machine, and
// stores the compressed bytes with H5Dwrite_chunk, instead of letting HDF5 deflate one chunk at a time on
// the writing thread. The compressor is libdeflate: its output is a standard zlib stream, the format HDF5's
// deflate filter stores and inflates, so any HDF5 reader sees the same data; on the series it is about a
// third faster than zlib and makes smaller chunks (docs/benchmarks.md). No HDF5 here: the caller owns the
// datasets and does the writes.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace warpsim::io {

class ChunkCompressor {
 public:
  // Writes one chunk's values into `chunk` (which arrives zero-filled: an edge chunk's padding stays 0).
  using Fill = std::function<void(std::span<double> chunk)>;

  // `level`: deflate level 1-9 (libdeflate's levels, which match zlib's in intent, not in bytes). `threads`:
  // workers (0 = one per hardware thread, at most 8).
  ChunkCompressor(int level, unsigned threads = 0);
  ~ChunkCompressor();  // stops the workers (jobs not yet taken are dropped)
  ChunkCompressor(const ChunkCompressor&) = delete;
  ChunkCompressor& operator=(const ChunkCompressor&) = delete;

  // Queues a chunk of `values` doubles. Whatever `fill` reads must outlive the job.
  void submit(std::size_t values, Fill fill);
  // The compressed bytes of the next submitted chunk not yet returned, waiting for it if needed. Throws
  // std::runtime_error if compressing it failed, std::logic_error if nothing is pending.
  std::vector<unsigned char> next();

 private:
  struct Job {
    std::size_t values = 0;
    Fill fill;
    std::optional<std::vector<unsigned char>> result;
    std::string error;
  };
  void work();

  int level_;
  std::mutex mutex_;
  std::condition_variable job_ready_;   // workers wait for jobs
  std::condition_variable chunk_done_;  // next() waits for its chunk
  std::vector<Job> jobs_;               // every submitted chunk, in order (released once returned)
  std::size_t taken_ = 0;               // jobs_[0, taken_) have been picked up by a worker
  std::size_t returned_ = 0;            // jobs_[0, returned_) have been handed back by next()
  bool stopping_ = false;
  std::vector<std::jthread> workers_;  // last: started after, and joined before, the state above
};

}  // namespace warpsim::io
