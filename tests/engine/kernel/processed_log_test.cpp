// The segmented processed-event log visits exactly the entries a pass over a flat log would (those below
// the bound, in log order), keeps the rest in order, and calls its prefetch hooks only for entries it is
// about to visit.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "engine/kernel/processed_log.hpp"

namespace warpsim {
namespace {

using Entry = ProcessedLog::Entry;

// The flat log the engine used before: one pass over everything.
std::vector<Entry> flat_collect(std::vector<Entry>& log, SimTime bound) {
  std::vector<Entry> visited, kept;
  for (const Entry& e : log) (e.time < bound ? visited : kept).push_back(e);
  log = kept;
  return visited;
}

bool same(const Entry& a, const Entry& b) {
  return a.index == b.index && a.stamp == b.stamp && a.time == b.time;
}

TEST(ProcessedLog, VisitsWhatAFlatPassWouldInTheSameOrder) {
  std::mt19937_64 gen(7);
  ProcessedLog log;
  std::vector<Entry> reference;
  std::uint32_t stamp = 0;
  SimTime gvt = 0;
  std::uint64_t visits = 0;
  for (int round = 0; round < 400; ++round) {
    // Mostly increasing times with out-of-order stragglers, several segments per round at times.
    const int pushes = static_cast<int>(gen() % (3 * ProcessedLog::kSegment));
    for (int i = 0; i < pushes; ++i) {
      const SimTime t = gvt + gen() % 5000 + (gen() % 8 == 0 ? 0 : static_cast<SimTime>(i));
      const Entry e{static_cast<std::uint32_t>(gen() % 100000), ++stamp, t};
      log.push(e);
      reference.push_back(e);
    }
    gvt += gen() % 3000;
    std::vector<Entry> visited;
    std::vector<Entry> far_seen, near_seen;
    log.collect(
        gvt, [&](const Entry& e) { far_seen.push_back(e); }, [&](const Entry& e) { near_seen.push_back(e); },
        [&](const Entry& e) { visited.push_back(e); });
    const std::vector<Entry> expected = flat_collect(reference, gvt);
    ASSERT_EQ(visited.size(), expected.size()) << "round " << round;
    for (std::size_t i = 0; i < expected.size(); ++i) ASSERT_TRUE(same(visited[i], expected[i])) << i;
    for (const Entry& e : far_seen) ASSERT_LT(e.time, gvt);
    for (const Entry& e : near_seen) ASSERT_LT(e.time, gvt);
    ASSERT_EQ(log.size(), reference.size());
    visits += visited.size();
  }
  EXPECT_GT(visits, 100000u);  // the rounds did commit, across many segments
  // Everything left goes at an infinite bound, still in order.
  std::vector<Entry> rest;
  log.collect(
      kTimeInfinity, [](const Entry&) {}, [](const Entry&) {}, [&](const Entry& e) { rest.push_back(e); });
  ASSERT_EQ(rest.size(), reference.size());
  for (std::size_t i = 0; i < rest.size(); ++i) ASSERT_TRUE(same(rest[i], reference[i]));
  EXPECT_EQ(log.size(), 0u);
}

TEST(ProcessedLog, SkipsSegmentsAboveTheBoundAndReusesEmptiedOnes) {
  ProcessedLog log;
  for (std::uint32_t i = 0; i < 4 * ProcessedLog::kSegment; ++i) log.push({i, i, 1000 + i});
  const std::size_t bytes = log.capacity_bytes();
  int visited = 0;
  log.collect(
      1000, [](const Entry&) {}, [](const Entry&) {}, [&](const Entry&) { ++visited; });
  EXPECT_EQ(visited, 0);
  log.collect(
      1000 + 2 * ProcessedLog::kSegment, [](const Entry&) {}, [](const Entry&) {},
      [&](const Entry&) { ++visited; });
  EXPECT_EQ(visited, static_cast<int>(2 * ProcessedLog::kSegment));
  EXPECT_EQ(log.size(), 2 * ProcessedLog::kSegment);
  // Two emptied segments became spares: pushing two more segments' worth allocates nothing new.
  for (std::uint32_t i = 0; i < 2 * ProcessedLog::kSegment; ++i) log.push({i, i, 9000 + i});
  EXPECT_EQ(log.capacity_bytes(), bytes);
}

}  // namespace
}  // namespace warpsim
