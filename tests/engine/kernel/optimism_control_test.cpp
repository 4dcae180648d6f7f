// The adaptive optimism control: the window beyond GVT starts unlimited, takes its scale from the rank's
// lead when it first shrinks, halves while the rollback share is above the target (never below the floor),
// grows back only when the window stopped the rank and rollbacks are rare, undoes a shrink that did not
// lower the rollback share, and never moves when adaptation is off.
#include <gtest/gtest.h>

#include <cstdint>

#include "engine/kernel/optimism_control.hpp"

namespace warpsim {
namespace {

// Feeds one adjustment interval of `processed` events of which `rolled_back` were undone.
struct Feeder {
  OptimismControl& control;
  std::uint64_t processed = 0;
  std::uint64_t rolled_back = 0;
  void interval(std::uint64_t p, std::uint64_t r, bool throttled, SimTime lead = 1'000'000) {
    if (throttled) control.note_throttled();
    processed += p;
    rolled_back += r;
    control.on_gvt(processed, rolled_back, lead);
  }
};

OptimismControl::Settings adaptive(double target = 0.1) {
  return {target, true, 100};
}

TEST(OptimismControl, ShrinksFromTheLeadWhileRollbacksFallAndStopsAtTheFloor) {
  OptimismControl control(adaptive(/*target=*/0.01));
  Feeder feed{control};
  EXPECT_EQ(control.window(), kTimeInfinity);
  feed.interval(1000, 5, false);  // 0.5%: nothing to do
  EXPECT_EQ(control.window(), kTimeInfinity);
  feed.interval(1000, 900, true, /*lead=*/1'024'000);  // 90%: half the lead the rank was running ahead by
  EXPECT_EQ(control.window(), 512'000u);
  // Shares that keep falling as the window shrinks (each below 3/4 of the one before): every shrink helps,
  // down to the floor, lead / 1024 = 1,000 ps.
  std::uint64_t share = 600;
  SimTime expected = 512'000;
  for (int i = 0; i < 11; ++i) {
    feed.interval(1000, share, true);
    expected = std::max<SimTime>(1'000, expected / 2);
    EXPECT_EQ(control.window(), expected) << "interval " << i;
    share = share * 7 / 10;
  }
  EXPECT_EQ(control.min_window(), 1'000u);
}

TEST(OptimismControl, GrowsBackOnlyWhenThrottledAndRollbacksAreRare) {
  OptimismControl control(adaptive());
  Feeder feed{control};
  feed.interval(1000, 500, true, 8000);
  EXPECT_EQ(control.window(), 4000u);
  feed.interval(1000, 0, /*throttled=*/false);  // the window did not bind: no reason to grow
  EXPECT_EQ(control.window(), 4000u);
  feed.interval(1000, 50, true);  // 5%: between target / 4 and target, keep
  EXPECT_EQ(control.window(), 4000u);
  feed.interval(1000, 10, true);  // 1%: grow by a quarter
  EXPECT_EQ(control.window(), 5000u);
  EXPECT_EQ(control.grows(), 1u);
}

TEST(OptimismControl, UndoesAShrinkThatDidNotLowerTheRollbackShare) {
  OptimismControl control(adaptive());
  Feeder feed{control};
  feed.interval(1000, 300, true, 8000);  // 30%: shrink from unlimited to half the lead
  EXPECT_EQ(control.window(), 4000u);
  feed.interval(1000, 290, true);  // still 29%: the shrink did not help, undo (unlimited again) and hold
  EXPECT_EQ(control.window(), kTimeInfinity);
  for (int i = 0; i < 16; ++i) feed.interval(1000, 300, true);  // held
  EXPECT_EQ(control.window(), kTimeInfinity);
  feed.interval(1000, 300, true, 6000);  // the hold is over: try again from the current lead
  EXPECT_EQ(control.window(), 3000u);
}

TEST(OptimismControl, SmallSamplesAccumulateUntilTheyAreWorthJudging) {
  OptimismControl control(adaptive());
  Feeder feed{control};
  feed.interval(50, 40, true, 8000);  // 50 < 100 events: not judged yet
  EXPECT_EQ(control.window(), kTimeInfinity);
  feed.interval(60, 0, true, 8000);  // 110 events, 40 rolled back: judged together
  EXPECT_EQ(control.window(), 4000u);
}

TEST(OptimismControl, OffNeverMoves) {
  OptimismControl off({0.1, false, 100});
  Feeder feed{off};
  for (int i = 0; i < 10; ++i) feed.interval(5000, 5000, true);
  EXPECT_EQ(off.window(), kTimeInfinity);
  EXPECT_EQ(off.shrinks(), 0u);
}

}  // namespace
}  // namespace warpsim
