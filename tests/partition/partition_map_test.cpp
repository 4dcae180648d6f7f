// Block and round-robin partitions map every LP to exactly one rank, consistently both ways.
#include <gtest/gtest.h>

#include <vector>

#include "partition/block_map.hpp"

namespace warpsim {

template <class Map>
void expect_exact_cover(std::uint64_t lps, int ranks) {
  Map map(lps, ranks);
  std::vector<int> owner(lps, -1);
  for (int r = 0; r < ranks; ++r) {
    for (LpId lp : map.lps_of(r)) {
      ASSERT_EQ(owner[lp], -1) << "LP " << lp << " mapped twice";
      owner[lp] = r;
      ASSERT_EQ(map.rank_of(lp), r);
    }
  }
  for (std::uint64_t lp = 0; lp < lps; ++lp) ASSERT_NE(owner[lp], -1) << "LP " << lp << " unmapped";
}

TEST(PartitionMaps, EveryLpExactlyOnce) {
  for (std::uint64_t lps : {1, 7, 64, 1000, 4099}) {
    for (int ranks : {1, 2, 3, 4, 7}) {
      if (lps < static_cast<std::uint64_t>(ranks)) continue;
      expect_exact_cover<BlockLpMap>(lps, ranks);
      expect_exact_cover<RoundRobinLpMap>(lps, ranks);
    }
  }
}

TEST(PartitionMaps, BlockIsBalancedWithinOne) {
  BlockLpMap map(1003, 4);
  for (int r = 0; r < 4; ++r) {
    const auto n = map.lps_of(r).size();
    EXPECT_TRUE(n == 250 || n == 251) << n;
  }
}

TEST(PartitionMaps, RejectsMoreRanksThanLps) {
  EXPECT_THROW(BlockLpMap(3, 4), std::invalid_argument);
  EXPECT_THROW(RoundRobinLpMap(3, 0), std::invalid_argument);
}

}  // namespace warpsim
