// CPU time this process has been given (user + system), for the CPU share every run reports: a rank whose
// CPU time falls well below its wall time was descheduled (a shared node, or more ranks than cores), which
// is what makes optimistic ranks wait for each other and roll back.
#pragma once

#include <sys/resource.h>

namespace warpsim {

inline double process_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * t.tv_usec; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace warpsim
