// zlib against libdeflate on a results file's series chunks (scripts/analysis/bench_deflate_libs.sh writes
// them): per compressor and level, compressed bytes and the best of three single-thread passes over all
// chunks. Usage: deflate_libs CHUNKS.bin LENGTHS.txt (LENGTHS: each chunk's byte count,
// whitespace-separated).
#include <libdeflate.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

namespace {

template <class Compress>
void measure(const char* name, int level, const std::vector<unsigned char>& data,
             const std::vector<std::size_t>& lengths, Compress compress) {
  double best = 1e300;
  std::size_t bytes = 0;
  for (int round = 0; round < 3; ++round) {
    const auto start = std::chrono::steady_clock::now();
    bytes = 0;
    std::size_t offset = 0;
    for (const std::size_t n : lengths) {
      bytes += compress(data.data() + offset, n);
      offset += n;
    }
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::printf("%-10s level %d: %10zu bytes  %.3f s\n", name, level, bytes, best);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s CHUNKS.bin LENGTHS.txt\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  const std::vector<unsigned char> data((std::istreambuf_iterator<char>(in)), {});
  std::ifstream lengths_in(argv[2]);
  std::vector<std::size_t> lengths;
  for (std::size_t n = 0; lengths_in >> n;) lengths.push_back(n);
  std::size_t total = 0;
  for (const std::size_t n : lengths) total += n;
  if (total != data.size() || lengths.empty()) {
    std::fprintf(stderr, "%s: %zu bytes, but the lengths add up to %zu\n", argv[1], data.size(), total);
    return 1;
  }
  std::printf("%zu chunks, %.1f MB of doubles\n", lengths.size(), static_cast<double>(total) / 1e6);
  std::vector<unsigned char> out(compressBound(*std::max_element(lengths.begin(), lengths.end())) + 1024);
  for (const int level : {1, 2, 3}) {
    measure("zlib", level, data, lengths, [&](const unsigned char* p, std::size_t n) {
      uLongf size = out.size();
      compress2(out.data(), &size, p, n, level);
      return static_cast<std::size_t>(size);
    });
  }
  for (const int level : {1, 2, 3, 4, 6}) {
    libdeflate_compressor* c = libdeflate_alloc_compressor(level);
    measure("libdeflate", level, data, lengths, [&](const unsigned char* p, std::size_t n) {
      return libdeflate_zlib_compress(c, p, n, out.data(), out.size());
    });
    libdeflate_free_compressor(c);
  }
  return 0;
}
