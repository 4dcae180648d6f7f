// Adaptive optimism control (see optimism_control.hpp).
#include "engine/optimism_control.hpp"

#include <algorithm>

namespace warpsim {

OptimismControl::OptimismControl(const Settings& settings)
    : settings_(settings), window_(std::max<std::uint64_t>(1, settings.ceiling)), min_window_(window_) {
  settings_.ceiling = window_;
  settings_.floor = std::clamp<std::uint64_t>(settings_.floor, 1, settings_.ceiling);
}

void OptimismControl::on_gvt(std::uint64_t processed, std::uint64_t rolled_back) {
  if (!settings_.adaptive) return;
  const std::uint64_t p = processed - base_processed_;
  // Judge a sample of at least `floor` events: a GVT round in which the rank ran a handful of events says
  // nothing about its speculation, so those rounds accumulate.
  if (p < settings_.floor) return;
  const double share = static_cast<double>(rolled_back - base_rolled_back_) / static_cast<double>(p);
  const bool shrunk_last = shrunk_last_;
  shrunk_last_ = false;
  if (share > settings_.rollback_target) {
    if (hold_ > 0) {
      --hold_;
    } else if (shrunk_last && share >= kNoEffect * share_before_shrink_) {
      // The smaller window did not cut the rollbacks: they come from events that depend on other ranks
      // at short range, not from running ahead, and a small window would only make the rank wait. Undo
      // the shrink and leave the window alone for a while.
      window_ = std::min(settings_.ceiling, window_ * 2);
      hold_ = kHoldRounds;
      ++grows_;
    } else {
      share_before_shrink_ = share;
      window_ = std::max(settings_.floor, window_ / 2);
      shrunk_last_ = true;
      ++shrinks_;
    }
  } else if (throttled_ && share < settings_.rollback_target / 4) {
    // Grow only when the window was what stopped the rank: otherwise a larger one changes nothing now and
    // would let a later burst run unchecked.
    window_ = std::min(settings_.ceiling, window_ + std::max<std::uint64_t>(1, window_ / 4));
    ++grows_;
  }
  min_window_ = std::min(min_window_, window_);
  base_processed_ = processed;
  base_rolled_back_ = rolled_back;
  throttled_ = false;
}

}  // namespace warpsim
