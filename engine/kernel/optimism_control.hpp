// Adaptive optimism control of the optimistic kernel: a per-rank window of simulated time beyond GVT within
// which the rank may run events, adjusted after every GVT round from the share of the rank's recent work
// that was rolled back. A rank whose speculation keeps being undone (it runs far ahead of ranks that later
// send it stragglers, typically because they were descheduled) halves its window; one whose speculation is
// almost all useful and that was stopped by the window grows it by a quarter. Multiplicative decrease with a
// gentler increase (as in Panesar and Fujimoto's adaptive flow control for Time Warp, and TCP congestion
// control) settles near the largest window that keeps the rollback share around the target. A shrink that
// does not lower the rollback share is undone: those rollbacks are not caused by running ahead.
//
// The window is in simulated time, not in events, so that a rank can always run the events just above GVT
// (the ones that hold everybody back): a limit on uncommitted events can fill up with far-future events and
// then lets the rank run only the events at GVT itself, one GVT round per time stamp. The window starts
// unlimited; its scale comes from the rank's own lead over GVT when it first shrinks. It only changes when
// events run, never which results they produce.
#pragma once

#include <cstdint>

#include "engine/sim_time.hpp"

namespace warpsim {

class OptimismControl {
 public:
  struct Settings {
    double rollback_target = 0.1;     // shrink when more than this share of processed events was rolled back
    bool adaptive = true;             // false: the window stays unlimited
    std::uint64_t min_sample = 1024;  // events a judgement needs at least (fewer accumulate)
  };

  explicit OptimismControl(const Settings& settings) : settings_(settings) {}

  // Current window beyond GVT (kTimeInfinity = unlimited).
  SimTime window() const { return window_; }
  // The rank could not run an event because it lay beyond the window.
  void note_throttled() { throttled_ = true; }
  // After a GVT round: the rank's cumulative processed (forward) and rolled-back (reverse) counts and how far
  // beyond GVT it has executed (its lead).
  void on_gvt(std::uint64_t processed, std::uint64_t rolled_back, SimTime lead);

  SimTime min_window() const { return min_window_; }
  std::uint64_t shrinks() const { return shrinks_; }
  std::uint64_t grows() const { return grows_; }

  // The window never goes below this share of the lead that first made it shrink...
  static constexpr SimTime kFloorDivisor = 1024;
  // ... a shrink that left the rollback share above this fraction of what it was is undone...
  static constexpr double kNoEffect = 0.75;
  // ... and no shrink is tried for this many adjustments after that.
  static constexpr std::uint32_t kHoldRounds = 16;

 private:
  Settings settings_;
  SimTime window_ = kTimeInfinity;
  SimTime min_window_ = kTimeInfinity;
  SimTime floor_ = 1;
  std::uint64_t base_processed_ = 0;
  std::uint64_t base_rolled_back_ = 0;
  bool throttled_ = false;
  bool shrunk_last_ = false;        // the previous adjustment was a shrink
  double share_before_shrink_ = 0;  // the rollback share that caused it
  SimTime window_before_shrink_ = kTimeInfinity;
  std::uint32_t hold_ = 0;  // adjustments left before the next shrink may be tried
  std::uint64_t shrinks_ = 0;
  std::uint64_t grows_ = 0;
};

}  // namespace warpsim
