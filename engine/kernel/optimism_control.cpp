// Adaptive optimism control (see optimism_control.hpp).
#include "engine/kernel/optimism_control.hpp"

#include <algorithm>

namespace warpsim {

void OptimismControl::on_gvt(std::uint64_t processed, std::uint64_t rolled_back, SimTime lead) {
  if (!settings_.adaptive) return;
  const std::uint64_t p = processed - base_processed_;
  // A GVT round in which the rank ran a handful of events says nothing about its speculation: accumulate.
  if (p < std::max<std::uint64_t>(1, settings_.min_sample)) return;
  const double share = static_cast<double>(rolled_back - base_rolled_back_) / static_cast<double>(p);
  const bool shrunk_last = shrunk_last_;
  shrunk_last_ = false;
  if (share > settings_.rollback_target) {
    if (hold_ > 0) {
      --hold_;
    } else if (shrunk_last && share >= kNoEffect * share_before_shrink_) {
      // The smaller window did not cut the rollbacks: they come from events that depend on other ranks at
      // short range, not from running ahead, and a small window would only make the rank wait. Undo the
      // shrink and leave the window alone for a while.
      window_ = window_before_shrink_;
      hold_ = kHoldRounds;
      ++grows_;
    } else if (window_ != kTimeInfinity || lead > 0) {
      window_before_shrink_ = window_;
      if (window_ == kTimeInfinity) {
        // From unlimited: the scale is how far ahead of GVT the rank has actually been running.
        floor_ = std::max<SimTime>(1, lead / kFloorDivisor);
        window_ = lead;
      }
      share_before_shrink_ = share;
      window_ = std::max(floor_, window_ / 2);
      shrunk_last_ = true;
      ++shrinks_;
    }
  } else if (throttled_ && share < settings_.rollback_target / 4 && window_ != kTimeInfinity) {
    // Grow only when the window was what stopped the rank: otherwise a larger one changes nothing now and
    // would let a later burst run unchecked.
    window_ = window_ > kTimeInfinity / 2 ? kTimeInfinity : window_ + std::max<SimTime>(1, window_ / 4);
    ++grows_;
  }
  min_window_ = std::min(min_window_, window_);
  base_processed_ = processed;
  base_rolled_back_ = rolled_back;
  throttled_ = false;
}

}  // namespace warpsim
