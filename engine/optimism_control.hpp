// Adaptive optimism control of the optimistic kernel: the per-rank limit on processed-but-uncommitted
// events ("window"), adjusted after every GVT round from the share of the rank's recent work that was
// rolled back. A rank whose speculation keeps being undone (it runs far ahead of ranks that later send it
// stragglers, typically because they were descheduled) halves its window; one whose speculation is almost
// all useful and that was stopped by the window grows it back by a quarter. Multiplicative decrease with a
// gentler increase (as in Panesar and Fujimoto's adaptive flow control for Time Warp, and TCP congestion
// control) settles near the largest window that keeps the rollback share around the target. A shrink that
// does not lower the rollback share is undone: those rollbacks are not caused by running ahead. A small
// window also bounds the rank's memory: uncommitted events, their send records and what they sent to others.
// The window only changes when events run, never which results they produce.
#pragma once

#include <cstdint>

namespace warpsim {

class OptimismControl {
 public:
  struct Settings {
    std::uint64_t ceiling = 1;     // largest window (the --max-uncommitted limit)
    std::uint64_t floor = 1;       // smallest window the controller goes down to (<= ceiling)
    double rollback_target = 0.1;  // shrink when more than this share of processed events was rolled back
    bool adaptive = true;          // false: the window stays at the ceiling
  };

  explicit OptimismControl(const Settings& settings);

  // Current limit on the rank's uncommitted events.
  std::uint64_t window() const { return window_; }
  // The rank could not run an event because the window was full.
  void note_throttled() { throttled_ = true; }
  // After a GVT round: the rank's cumulative processed (forward) and rolled-back (reverse) counts.
  void on_gvt(std::uint64_t processed, std::uint64_t rolled_back);

  std::uint64_t min_window() const { return min_window_; }
  std::uint64_t shrinks() const { return shrinks_; }
  std::uint64_t grows() const { return grows_; }

 private:
  // A shrink that left the rollback share above this fraction of what it was is undone...
  static constexpr double kNoEffect = 0.75;
  // ... and no shrink is tried for this many adjustments after that.
  static constexpr std::uint32_t kHoldRounds = 16;

  Settings settings_;
  std::uint64_t window_;
  std::uint64_t min_window_;
  std::uint64_t base_processed_ = 0;
  std::uint64_t base_rolled_back_ = 0;
  bool throttled_ = false;
  bool shrunk_last_ = false;        // the previous adjustment was a shrink
  double share_before_shrink_ = 0;  // the rollback share that caused it
  std::uint32_t hold_ = 0;          // adjustments left before the next shrink may be tried
  std::uint64_t shrinks_ = 0;
  std::uint64_t grows_ = 0;
};

}  // namespace warpsim
