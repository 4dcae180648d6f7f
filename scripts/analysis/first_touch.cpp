// How much faulting memory in costs on this machine (docs/benchmarks.md, "libdeflate, tile fills and leaner
// grid blocks"): maps 80 MB, asks for huge pages and faults it in with MADV_POPULATE_WRITE, three times in a
// row, unmapping in between. On a VM that returns free memory to its host the first round pays for fresh
// memory; later rounds reuse what the process just gave back. Linux >= 5.14.
#include <sys/mman.h>

#include <chrono>
#include <cstdint>
#include <cstdio>

int main() {
  constexpr std::size_t kBytes = std::size_t{80} << 20;
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  for (int round = 1; round <= 3; ++round) {
    const auto start = std::chrono::steady_clock::now();
    void* map = mmap(nullptr, kBytes + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) return 1;
    auto* data = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(map) + kHuge - 1) / kHuge * kHuge);
    madvise(data, kBytes, MADV_HUGEPAGE);
    if (madvise(data, kBytes, MADV_POPULATE_WRITE) != 0) {
      std::perror("MADV_POPULATE_WRITE");
      return 1;
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("round %d: 80 MB faulted in in %.3f s (%.2f GB/s)\n", round, s,
                static_cast<double>(kBytes) / s / 1e9);
    munmap(map, kBytes + kHuge);
  }
  return 0;
}
