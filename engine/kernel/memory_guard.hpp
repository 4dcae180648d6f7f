// Per-rank memory budget of an optimistic run (EngineConfig::memory_budget_bytes, `--memory-budget`).
//
// What an optimistic rank holds beyond its share of the model grows with how far it runs ahead: every
// processed-but-uncommitted event keeps its pool slot, send records and log entry, the events it sent wait
// in the receiving rank's pending queue, and rolled-back work leaves anti-messages and MPI buffers behind.
// The one lever the engine has over that is the uncommitted-event limit, so the guard sets it from the
// budget: at the start of the run, half the headroom (budget minus the resident memory once the LPs
// exist, or the forecast of its peak without speculation if larger) divided by the measured cost of one
// event of that limit; then, at most every 10 ms of wall time at a GVT round, it halves the limit whenever
// the resident memory is above 90% of the budget (memory freed to
// the allocator is not returned to the system, so the limit never grows back). The limit never goes below
// kMinLimit, so a budget too small for the model itself shows as a peak above it, reported after the run,
// not as a run that cannot advance.
#pragma once

#include <chrono>
#include <cstdint>

namespace warpsim {

class MemoryGuard {
 public:
  // Resident bytes per event of the uncommitted-event limit, all costs above included: measured on the
  // 100k example on 2 ranks (docs/scale.md): 133.2 MiB per rank with the default limit of 65,536 events,
  // 71.8 MiB with 2,048, i.e. 61.4 MiB for 63,488 events, 1,014 bytes each.
  static constexpr std::uint64_t kBytesPerUncommittedEvent = 1024;
  static constexpr std::uint64_t kMinLimit = 256;
  static constexpr double kCutShare = 0.9;

  MemoryGuard() = default;
  explicit MemoryGuard(std::uint64_t budget_bytes) : budget_(budget_bytes) {}

  bool active() const { return budget_ != 0; }
  // The limit to start with, given the configured one and the resident memory now.
  std::uint64_t initial_limit(std::uint64_t configured, std::uint64_t resident_bytes) const;
  // At a GVT round: the limit to continue with (halved while the resident memory is above kCutShare of the
  // budget: the cut takes effect only as the rank's uncommitted events commit, so it starts before the
  // budget is reached).
  std::uint64_t on_gvt(std::uint64_t limit);
  std::uint64_t cuts() const { return cuts_; }

 private:
  std::uint64_t budget_ = 0;
  std::uint64_t cuts_ = 0;
  std::chrono::steady_clock::time_point next_check_{};
};

// Resident memory of this process now (/proc/self/statm), 0 where it cannot be read.
std::uint64_t resident_bytes_now();

}  // namespace warpsim
