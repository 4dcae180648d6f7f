// The adaptive optimism control: the window halves while the rollback share is above the target, grows back
// only when the window stopped the rank and rollbacks are rare, stays within [floor, ceiling], undoes a
// shrink that did not lower the rollback share, and never moves in fixed mode.
#include <gtest/gtest.h>

#include <cstdint>

#include "engine/optimism_control.hpp"

namespace warpsim {
namespace {

// Feeds one adjustment interval of `processed` events of which `rolled_back` were undone.
struct Feeder {
  OptimismControl& control;
  std::uint64_t processed = 0;
  std::uint64_t rolled_back = 0;
  void interval(std::uint64_t p, std::uint64_t r, bool throttled) {
    if (throttled) control.note_throttled();
    processed += p;
    rolled_back += r;
    control.on_gvt(processed, rolled_back);
  }
};

TEST(OptimismControl, ShrinksWhileRollbacksAreFrequentAndStopsAtTheFloor) {
  OptimismControl control({/*ceiling=*/65536, /*floor=*/1024, /*rollback_target=*/0.1, /*adaptive=*/true});
  Feeder feed{control};
  EXPECT_EQ(control.window(), 65536u);
  // Rollback shares (rolled back per 10,000 processed) that keep falling as the window shrinks: every shrink
  // helps.
  const std::uint64_t shares[] = {9000, 6000, 4400, 3200, 2300, 1700, 1200};
  const std::uint64_t windows[] = {32768, 16384, 8192, 4096, 2048, 1024, 1024};
  for (int i = 0; i < 7; ++i) {
    feed.interval(10000, shares[i], true);
    EXPECT_EQ(control.window(), windows[i]) << "interval " << i;
  }
  EXPECT_EQ(control.min_window(), 1024u);
  EXPECT_EQ(control.shrinks(), 7u);
}

TEST(OptimismControl, GrowsBackOnlyWhenThrottledAndRollbacksAreRare) {
  OptimismControl control({4096, 64, 0.1, true});
  Feeder feed{control};
  feed.interval(1000, 500, true);
  EXPECT_EQ(control.window(), 2048u);
  feed.interval(1000, 0, /*throttled=*/false);  // the window did not bind: no reason to grow
  EXPECT_EQ(control.window(), 2048u);
  feed.interval(1000, 50, true);  // 5%: between target / 4 and target, keep
  EXPECT_EQ(control.window(), 2048u);
  feed.interval(1000, 10, true);  // 1%: grow by a quarter
  EXPECT_EQ(control.window(), 2560u);
  for (int i = 0; i < 20; ++i) feed.interval(1000, 0, true);
  EXPECT_EQ(control.window(), 4096u);  // capped at the ceiling
  EXPECT_GE(control.grows(), 2u);
}

TEST(OptimismControl, UndoesAShrinkThatDidNotLowerTheRollbackShare) {
  OptimismControl control({8192, 64, 0.1, true});
  Feeder feed{control};
  feed.interval(1000, 300, true);  // 30%: shrink
  EXPECT_EQ(control.window(), 4096u);
  feed.interval(1000, 290, true);  // still 29%: the shrink did not help, undo and hold
  EXPECT_EQ(control.window(), 8192u);
  for (int i = 0; i < 16; ++i) feed.interval(1000, 300, true);  // held
  EXPECT_EQ(control.window(), 8192u);
  feed.interval(1000, 300, true);  // the hold is over: try again
  EXPECT_EQ(control.window(), 4096u);
}

TEST(OptimismControl, SmallSamplesAccumulateUntilTheyAreWorthJudging) {
  OptimismControl control({4096, 1024, 0.1, true});
  Feeder feed{control};
  feed.interval(500, 400, true);  // 500 < floor events: not judged yet
  EXPECT_EQ(control.window(), 4096u);
  feed.interval(600, 0, true);  // 1,100 events, 400 rolled back: judged together
  EXPECT_EQ(control.window(), 2048u);
}

TEST(OptimismControl, FixedModeNeverMovesAndBoundsAreSane) {
  OptimismControl fixed({2048, 32, 0.1, false});
  Feeder feed{fixed};
  for (int i = 0; i < 10; ++i) feed.interval(5000, 5000, true);
  EXPECT_EQ(fixed.window(), 2048u);
  EXPECT_EQ(fixed.shrinks(), 0u);
  OptimismControl odd({0, 5000, 0.1, true});  // ceiling 0 -> 1, floor clamped to the ceiling
  EXPECT_EQ(odd.window(), 1u);
  Feeder feed_odd{odd};
  feed_odd.interval(10, 10, true);
  EXPECT_EQ(odd.window(), 1u);
}

}  // namespace
}  // namespace warpsim
