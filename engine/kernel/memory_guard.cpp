// Per-rank memory budget of an optimistic run (see memory_guard.hpp).
#include "engine/kernel/memory_guard.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace warpsim {

std::uint64_t resident_bytes_now() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long long size = 0, resident = 0;
  const int read = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  if (read != 2) return 0;
  return static_cast<std::uint64_t>(resident) * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

std::uint64_t MemoryGuard::initial_limit(std::uint64_t configured, std::uint64_t resident_bytes) const {
  if (!active()) return configured;
  const std::uint64_t headroom = budget_ > resident_bytes ? budget_ - resident_bytes : 0;
  const std::uint64_t from_budget = headroom / 2 / kBytesPerUncommittedEvent;
  return std::max(kMinLimit, std::min(configured, from_budget));
}

std::uint64_t MemoryGuard::on_gvt(std::uint64_t limit) {
  if (!active()) return limit;
  // A GVT round can come every few microseconds; reading /proc costs a few, so look at most every 10 ms.
  const auto now = std::chrono::steady_clock::now();
  if (now < next_check_) return limit;
  next_check_ = now + std::chrono::milliseconds(10);
  if (limit <= kMinLimit ||
      static_cast<double>(resident_bytes_now()) <= kCutShare * static_cast<double>(budget_))
    return limit;
  ++cuts_;
  return std::max(kMinLimit, limit / 2);
}

}  // namespace warpsim
