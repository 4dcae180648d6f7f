// Philox4x32-10 known-answer vectors (Random123's kat_vectors) and the stream properties the engine relies
// on.
#include <gtest/gtest.h>

#include <set>

#include "engine/random.hpp"

namespace warpsim {

TEST(Philox, MatchesRandom123KnownAnswers) {
  EXPECT_EQ(Philox4x32::generate({0, 0, 0, 0}, {0, 0}),
            (Philox4x32::Block{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  EXPECT_EQ(
      Philox4x32::generate({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu}),
      (Philox4x32::Block{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  EXPECT_EQ(
      Philox4x32::generate({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, {0xa4093822u, 0x299f31d0u}),
      (Philox4x32::Block{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

TEST(Rng, SameStreamReplaysSameDraws) {
  Rng a(42, 7, 123456789), b(42, 7, 123456789);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.next_u64(), b.next_u64());
}

TEST(Rng, DifferentStreamsDiffer) {
  std::set<std::uint64_t> firsts;
  for (std::uint32_t src = 0; src < 64; ++src) {
    for (std::uint64_t order = 0; order < 64; ++order) firsts.insert(Rng(1, src, order).next_u64());
  }
  EXPECT_EQ(firsts.size(), 64u * 64u);
  EXPECT_NE(Rng(1, 0, 0).next_u64(), Rng(2, 0, 0).next_u64());
}

TEST(Rng, UniformIsInUnitIntervalAndBelowIsInRange) {
  Rng r(3, 1, 2);
  double sum = 0;
  for (int i = 0; i < 100000; ++i) {
    const double u = r.uniform();
    ASSERT_GT(u, 0.0);
    ASSERT_LE(u, 1.0);
    sum += u;
    ASSERT_LT(r.below(10), 10u);
  }
  EXPECT_NEAR(sum / 100000, 0.5, 0.01);
}

TEST(Rng, ExponentialHasRequestedMean) {
  Rng r(5, 9, 9);
  double sum = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) sum += r.exponential(2.5);
  EXPECT_NEAR(sum / n, 2.5, 0.03);
}

}  // namespace warpsim
