// The event pool keeps slots stable while it grows and reuses freed slots.
#include <gtest/gtest.h>

#include <vector>

#include "engine/kernel/event_pool.hpp"

namespace warpsim {

TEST(EventPool, StrideCoversHeaderAndPayloadAndIsAligned) {
  EXPECT_EQ(EventPool(0).stride(), 40u);
  EXPECT_EQ(EventPool(1).stride(), 48u);
  EXPECT_EQ(EventPool(24).stride(), 64u);
}

TEST(EventPool, SlotsStayPutWhileGrowingAndAreReused) {
  EventPool pool(16);
  std::vector<std::uint32_t> ids;
  const std::uint32_t first = pool.allocate();
  EventHeader* first_address = &pool.at(first);
  first_address->time = 77;
  for (int i = 0; i < 50000; ++i) ids.push_back(pool.allocate());
  EXPECT_EQ(&pool.at(first), first_address);
  EXPECT_EQ(pool.at(first).time, 77u);
  EXPECT_EQ(pool.live(), 50001u);
  for (auto id : ids) pool.release(id);
  EXPECT_EQ(pool.live(), 1u);
  const std::size_t reserved = pool.reserved_bytes();
  for (int i = 0; i < 50000; ++i) pool.allocate();
  EXPECT_EQ(pool.reserved_bytes(), reserved);
  EXPECT_EQ(pool.peak_live(), 50001u);
}

// Freed slots are reused last-in first-out: the last released is handed out first (the one most likely
// still in cache).
TEST(EventPool, ReusesTheLastReleasedSlotFirst) {
  EventPool pool(8);
  const std::uint32_t a = pool.allocate();
  const std::uint32_t b = pool.allocate();
  const std::uint32_t c = pool.allocate();
  pool.release(a);
  pool.release(c);
  pool.release(b);
  EXPECT_EQ(pool.at(b).state, EventState::kFree);
  EXPECT_EQ(pool.allocate(), b);
  EXPECT_EQ(pool.allocate(), c);
  EXPECT_EQ(pool.allocate(), a);
  const std::uint32_t fresh = pool.allocate();
  EXPECT_NE(fresh, a);
  EXPECT_NE(fresh, b);
  EXPECT_NE(fresh, c);
  EXPECT_EQ(pool.live(), 4u);
}

}  // namespace warpsim
