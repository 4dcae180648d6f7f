// engine/hash.hpp: each helper's output is persisted (digests, sweep ids, checkpoint checksums, ECMP paths),
// so these pin published reference values and the exact mixers the project used before they were merged.
#include "engine/hash.hpp"

#include <gtest/gtest.h>

namespace warpsim {
namespace {

TEST(Hash, Fnv1aMatchesPublishedVectors) {
  // Reference values of 64-bit FNV-1a (Fowler/Noll/Vo test suite).
  EXPECT_EQ(fnv1a(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a("foobar"), 0x85944171f73967e8ull);
}

TEST(Hash, IncrementalFnv1aEqualsWholeString) {
  Fnv1a h;
  h.update("foo");
  h.update("bar");
  EXPECT_EQ(h.value(), fnv1a("foobar"));
}

TEST(Hash, SweepBasisIsKept) {
  // The sweep store's ids depend on this basis; a changed value would orphan existing results folders.
  EXPECT_EQ(fnv1a("", kSweepIdFnv1aBasis), 1469598103934665603ull);
  EXPECT_NE(fnv1a("x", kSweepIdFnv1aBasis), fnv1a("x"));
}

TEST(Hash, MixersAreTheHistoricalOnes) {
  // Hand-computed from the formulas the models used before the merge: zero is a fixed point of all three,
  // and one known input pins each multiplier.
  EXPECT_EQ(splitmix64_finalize(0), 0u);
  EXPECT_EQ(murmur3_fmix64(0), 0u);
  EXPECT_EQ(fibonacci_mix64(0), 0u);
  EXPECT_EQ(splitmix64_finalize(1), 0x5692161d100b05e5ull);
  EXPECT_EQ(murmur3_fmix64(1), 0xb456bcfc34c2cb2cull);
  EXPECT_EQ(fibonacci_mix64(1), 0x9e3779b97f4a7c15ull ^ (0x9e3779b97f4a7c15ull >> 29));
}

}  // namespace
}  // namespace warpsim
