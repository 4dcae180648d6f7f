// ZeroedBuffer: small (calloc) and large (huge-page mapped, with a tail in ordinary pages) buffers read as
// zeros over their whole length and are writable to the last element, before and after populate_async();
// moving one hands the memory over.
#include <gtest/gtest.h>

#include <cstddef>
#include <utility>

#include "engine/zeroed_buffer.hpp"

namespace warpsim {
namespace {

constexpr std::size_t kHugeDoubles = (std::size_t{2} << 20) / sizeof(double);

void expect_zero_then_writable(ZeroedBuffer& b) {
  for (std::size_t i = 0; i < b.size(); ++i) ASSERT_EQ(b.data()[i], 0.0) << i;
  for (std::size_t i = 0; i < b.size(); ++i) b.data()[i] = static_cast<double>(i);
  for (std::size_t i = 0; i < b.size(); i += 4099) ASSERT_EQ(b.data()[i], static_cast<double>(i));
  ASSERT_EQ(b.data()[b.size() - 1], static_cast<double>(b.size() - 1));
}

TEST(ZeroedBuffer, SmallAndLargeBuffersAreZeroAndWritableToTheEnd) {
  // Small; exactly one huge page; one and a bit (a tail in 4 KiB pages); less than a page of tail.
  for (const std::size_t count :
       {std::size_t{1000}, kHugeDoubles, kHugeDoubles + 327'680, 3 * kHugeDoubles + 5}) {
    ZeroedBuffer b(count);
    ASSERT_EQ(b.size(), count);
    expect_zero_then_writable(b);
  }
}

TEST(ZeroedBuffer, PopulatedBuffersAreZeroAndMoveTheirMemory) {
  ZeroedBuffer b(kHugeDoubles + 327'680);
  b.populate_async();  // the data may be used at once, while the pages are faulted in
  b.data()[7] = 3;
  ZeroedBuffer moved(std::move(b));
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(moved.data()[7], 3.0);
  moved.data()[7] = 0;
  expect_zero_then_writable(moved);
  ZeroedBuffer target(10);
  target = std::move(moved);
  EXPECT_EQ(target.size(), kHugeDoubles + 327'680);
  EXPECT_EQ(target.data()[target.size() - 1], static_cast<double>(target.size() - 1));
}

}  // namespace
}  // namespace warpsim
