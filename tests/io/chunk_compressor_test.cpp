// ChunkCompressor: chunks come back in submission order whatever worker compressed them, inflate to what
// their fill wrote (zero padding included) with zlib's inflate (what HDF5's deflate filter reads them
// with), and a failing fill is reported for its own chunk only.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <stdexcept>
#include <vector>

#include "io/chunk_compressor.hpp"

namespace warpsim::io {
namespace {

std::vector<double> inflate(const std::vector<unsigned char>& bytes, std::size_t values) {
  std::vector<double> out(values);
  uLongf size = static_cast<uLongf>(values * sizeof(double));
  EXPECT_EQ(uncompress(reinterpret_cast<Bytef*>(out.data()), &size, bytes.data(), bytes.size()), Z_OK);
  EXPECT_EQ(size, values * sizeof(double));
  return out;
}

TEST(ChunkCompressor, ReturnsChunksInSubmissionOrderAndInflatesToTheirValues) {
  ChunkCompressor compressor(1, 3);
  constexpr std::size_t kChunks = 40;
  for (std::size_t i = 0; i < kChunks; ++i) {
    // Chunks of different sizes, so workers finish out of order; only the first half of each is filled.
    compressor.submit(1000 + 97 * i, [i](std::span<double> chunk) {
      for (std::size_t j = 0; j < chunk.size() / 2; ++j) chunk[j] = static_cast<double>(i * 7 + j % 5);
    });
  }
  for (std::size_t i = 0; i < kChunks; ++i) {
    const std::vector<double> values = inflate(compressor.next(), 1000 + 97 * i);
    for (std::size_t j = 0; j < values.size(); ++j) {
      ASSERT_EQ(values[j], j < values.size() / 2 ? static_cast<double>(i * 7 + j % 5) : 0.0) << i << " " << j;
    }
  }
  EXPECT_THROW(compressor.next(), std::logic_error);
}

TEST(ChunkCompressor, AFailingFillFailsOnlyItsChunk) {
  ChunkCompressor compressor(6, 2);
  compressor.submit(10, [](std::span<double> chunk) { chunk[0] = 1; });
  compressor.submit(10, [](std::span<double>) { throw std::runtime_error("no data"); });
  compressor.submit(10, [](std::span<double> chunk) { chunk[9] = 2; });
  EXPECT_EQ(inflate(compressor.next(), 10)[0], 1.0);
  EXPECT_THROW(compressor.next(), std::runtime_error);
  EXPECT_EQ(inflate(compressor.next(), 10)[9], 2.0);
}

TEST(ChunkCompressor, RejectsLevelsOutsideOneToNine) {
  EXPECT_THROW(ChunkCompressor(0), std::invalid_argument);
  EXPECT_THROW(ChunkCompressor(10), std::invalid_argument);
}

}  // namespace
}  // namespace warpsim::io
