// The automatic series interval of `warpsim run --output` (experiment/run_output.hpp): estimate / 100
// rounded up to 1, 2 or 5 x 10^k ns, so that a run longer than its compute-only estimate still gets about
// 100 samples.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "experiment/run_output.hpp"

namespace warpsim::experiment {
namespace {

constexpr SimTime kUs = 1'000'000;  // picoseconds

TEST(AutomaticInterval, RoundsUpToOneTwoOrFiveTimesAPowerOfTen) {
  EXPECT_EQ(automatic_interval_ps(0.0716), 1000 * kUs);  // the default experiment's estimate: 716 us -> 1 ms
  EXPECT_EQ(automatic_interval_ps(0.1), 1000 * kUs);     // exactly 1 ms stays 1 ms
  EXPECT_EQ(automatic_interval_ps(0.1001), 2000 * kUs);
  EXPECT_EQ(automatic_interval_ps(0.15), 2000 * kUs);
  EXPECT_EQ(automatic_interval_ps(0.25), 5000 * kUs);
  EXPECT_EQ(automatic_interval_ps(0.6), 10000 * kUs);
  EXPECT_EQ(automatic_interval_ps(3.0), 50000 * kUs);
}

TEST(AutomaticInterval, GivesFortyToOneHundredSamplesOverTheEstimate) {
  for (double seconds = 1e-5; seconds < 1e4; seconds *= 1.37) {
    const double samples = seconds * 1e12 / static_cast<double>(automatic_interval_ps(seconds));
    EXPECT_GE(samples, 40.0 - 1e-9) << seconds;
    EXPECT_LE(samples, 100.0 + 1e-9) << seconds;
  }
}

TEST(AutomaticInterval, NeverBelowOneNanosecond) {
  EXPECT_EQ(automatic_interval_ps(0.0), SimTime{1000});
  EXPECT_EQ(automatic_interval_ps(1e-9), SimTime{1000});
  EXPECT_EQ(automatic_interval_ps(-1.0), SimTime{1000});
  EXPECT_EQ(automatic_interval_ps(std::numeric_limits<double>::quiet_NaN()), SimTime{1000});
  EXPECT_EQ(automatic_interval_ps(std::numeric_limits<double>::infinity()), SimTime{1000});
}

}  // namespace
}  // namespace warpsim::experiment
