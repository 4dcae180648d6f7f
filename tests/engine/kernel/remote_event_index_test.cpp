// The remote-event index behaves like a map under heavy insert/erase churn (backward-shift deletion).
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "engine/kernel/remote_event_index.hpp"

namespace warpsim {

TEST(RemoteEventIndex, MatchesStdMapUnderChurn) {
  std::mt19937_64 gen(5);
  RemoteEventIndex index;
  std::map<std::pair<LpId, std::uint64_t>, std::uint32_t> reference;
  for (std::uint32_t step = 0; step < 200000; ++step) {
    const LpId src = static_cast<LpId>(gen() % 64);
    const std::uint64_t order = gen() % 512;
    if (gen() % 2) {
      if (!reference.count({src, order})) {
        index.insert(src, order, step);
        reference[{src, order}] = step;
      }
    } else {
      index.erase(src, order);
      reference.erase({src, order});
    }
    if (step % 1000 == 0) {
      ASSERT_EQ(index.size(), reference.size());
      for (const auto& [k, v] : reference) ASSERT_EQ(index.find(k.first, k.second), v);
    }
  }
  EXPECT_EQ(index.find(999, 999), kNil);
}

}  // namespace warpsim
