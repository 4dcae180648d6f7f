// MemoryGuard: the uncommitted-event limit an optimistic rank takes from a per-rank memory budget.
#include "engine/kernel/memory_guard.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace warpsim {
namespace {

constexpr std::uint64_t kMiB = 1024 * 1024;

TEST(MemoryGuard, WithoutABudgetTheConfiguredLimitStands) {
  MemoryGuard guard;
  EXPECT_FALSE(guard.active());
  EXPECT_EQ(guard.initial_limit(65536, 500 * kMiB), 65536u);
  EXPECT_EQ(guard.on_gvt(65536), 65536u);
  EXPECT_EQ(guard.cuts(), 0u);
}

TEST(MemoryGuard, StartsWithHalfTheHeadroomInEvents) {
  const MemoryGuard guard(100 * kMiB);
  // 40 MiB of headroom, half of it at 1 KiB per event.
  EXPECT_EQ(guard.initial_limit(65536, 60 * kMiB), 20u * 1024);
  // A smaller configured limit is kept.
  EXPECT_EQ(guard.initial_limit(1000, 60 * kMiB), 1000u);
  // No headroom (or less than the floor's worth): the smallest limit, never 0.
  EXPECT_EQ(guard.initial_limit(65536, 100 * kMiB), MemoryGuard::kMinLimit);
  EXPECT_EQ(guard.initial_limit(65536, 200 * kMiB), MemoryGuard::kMinLimit);
  EXPECT_EQ(guard.initial_limit(65536, 100 * kMiB - 10 * 1024), MemoryGuard::kMinLimit);
}

TEST(MemoryGuard, HalvesTheLimitWhileOverBudgetAtMostEveryTenMilliseconds) {
  ASSERT_GT(resident_bytes_now(), 0u) << "/proc/self/statm must be readable";
  MemoryGuard guard(1);  // every process is above one byte
  EXPECT_EQ(guard.on_gvt(4096), 2048u);
  EXPECT_EQ(guard.cuts(), 1u);
  EXPECT_EQ(guard.on_gvt(2048), 2048u) << "a second round within 10 ms does not look again";
  std::this_thread::sleep_for(std::chrono::milliseconds(12));
  EXPECT_EQ(guard.on_gvt(2048), 1024u);
  std::this_thread::sleep_for(std::chrono::milliseconds(12));
  EXPECT_EQ(guard.on_gvt(300), MemoryGuard::kMinLimit) << "never below the smallest limit";
  std::this_thread::sleep_for(std::chrono::milliseconds(12));
  EXPECT_EQ(guard.on_gvt(MemoryGuard::kMinLimit), MemoryGuard::kMinLimit);
  EXPECT_EQ(guard.cuts(), 3u);
}

TEST(MemoryGuard, UnderBudgetTheLimitStands) {
  MemoryGuard guard(std::uint64_t{1} << 50);
  EXPECT_EQ(guard.on_gvt(4096), 4096u);
  EXPECT_EQ(guard.cuts(), 0u);
}

}  // namespace
}  // namespace warpsim
