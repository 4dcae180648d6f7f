// Peak resident memory of this process, for the memory reports every run prints.
#pragma once

#include <sys/resource.h>

#include <cstdint>

namespace warpsim {

inline std::uint64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

}  // namespace warpsim
