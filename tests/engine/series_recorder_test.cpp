// SeriesRecorder semantics: counters sum per interval, gauges give the interval's peak or time-weighted
// mean with the level carried across intervals, the last interval may be partial, and bad declarations throw;
// spreads split by overlap, peaks hold no level, the one-check current-sample record matches the per-record
// calls, the grid grows and coarsens exactly.
#include "engine/series_recorder.hpp"

#include <gtest/gtest.h>

#include <span>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace warpsim {
namespace {

std::vector<double> row(const SeriesRecorder& r, SeriesRecorder::Component c, std::uint32_t metric) {
  const auto s = r.row(c.kind, metric, c.local);
  return {s.begin(), s.end()};
}

TEST(SeriesRecorder, GridCoversTheRunWithAPartialLastSample) {
  SeriesRecorder r(10, 35);
  EXPECT_EQ(r.sample_count(), 4u);
  SeriesRecorder exact(10, 40);
  EXPECT_EQ(exact.sample_count(), 4u);
}

TEST(SeriesRecorder, SumAddsPerIntervalAndIgnoresTimesAtOrAfterTheEnd) {
  SeriesRecorder r(10, 40);
  const auto k = r.declare_kind("x", 3, {MetricSpec{"n", "events", Aggregation::kSum, ""}});
  const auto a = r.add_component(k, 2);
  const auto b = r.add_component(k, 0);
  r.add(a, 0, 0, 1);
  r.add(a, 0, 9, 2);
  r.add(a, 0, 10, 4);
  r.add(a, 0, 39, 8);
  r.add(a, 0, 40, 100);  // at the end: not part of the run
  r.add(b, 0, 25, 5);
  r.add(b, 0, 3, 7);  // out of order (not expected from commit handlers, but still counted right)
  r.add(b, 0, 29, 1);
  r.finish();
  EXPECT_EQ(row(r, a, 0), (std::vector<double>{3, 4, 0, 8}));
  EXPECT_EQ(row(r, b, 0), (std::vector<double>{7, 0, 6, 0}));
  EXPECT_EQ(r.kinds()[0].ids, (std::vector<std::uint64_t>{2, 0}));
}

TEST(SeriesRecorder, MaxCarriesTheLevelIntoLaterIntervals) {
  SeriesRecorder r(10, 50);
  const auto k = r.declare_kind("q", 1, {MetricSpec{"depth", "packets", Aggregation::kMax, ""}});
  const auto c = r.add_component(k, 0);
  r.set(c, 0, 5, 3);   // level 3 from t=5
  r.set(c, 0, 7, 1);   // peak 3 in [0,10), then 1
  r.set(c, 0, 30, 6);  // 1 held through [10,30); 6 from 30
  r.set(c, 0, 30, 2);  // same instant: peak 6 still counts in [30,40)
  r.finish();          // 2 held to the end
  EXPECT_EQ(row(r, c, 0), (std::vector<double>{3, 1, 1, 6, 2}));
}

TEST(SeriesRecorder, TimeAverageWeightsLevelsByDurationIncludingAPartialLastSample) {
  SeriesRecorder r(10, 35);
  const auto k = r.declare_kind("g", 1, {MetricSpec{"busy", "fraction", Aggregation::kTimeAverage, ""}});
  const auto c = r.add_component(k, 0);
  r.set(c, 0, 5, 1);   // [0,5) at 0, [5,15) at 1
  r.set(c, 0, 15, 0);  // [15,32) at 0
  r.set(c, 0, 32, 1);  // [32,35) at 1: the last sample is 5 ps long
  r.finish();
  const auto v = row(r, c, 0);
  ASSERT_EQ(v.size(), 4u);
  EXPECT_DOUBLE_EQ(v[0], 0.5);
  EXPECT_DOUBLE_EQ(v[1], 0.5);
  EXPECT_DOUBLE_EQ(v[2], 0.0);
  EXPECT_DOUBLE_EQ(v[3], 3.0 / 5.0);
}

// A gauge that changes within its component's current sample (the accumulator's) is summed there; one
// still held at finish() within that sample must reach the grid too.
TEST(SeriesRecorder, TimeAverageGaugeWithinTheCurrentSampleIsFlushedAtFinish) {
  for (const bool held_at_end : {false, true}) {
    SeriesRecorder r(10, 35);
    const auto k = r.declare_kind("g", 1,
                                  {MetricSpec{"wait", "fraction", Aggregation::kTimeAverage, ""},
                                   MetricSpec{"bytes", "bytes", Aggregation::kSum, ""}});
    const auto c = r.add_component(k, 0);
    r.add(c, 1, 0, 1.0);  // the cursor on sample 0
    r.set(c, 0, 1, 1);    // [1,3) at 1
    r.set(c, 0, 3, 0);
    r.set(c, 0, 4, 1);  // [4,10) at 1, then held over sample 1 and into sample 2
    r.add(c, 1, 21, 1.0);
    r.set(c, 0, 22, 0);    // [20,22) at 1
    r.add(c, 1, 30, 1.0);  // the cursor on the last sample [30,35)
    r.set(c, 0, 32, 1);
    r.set(c, 0, 33, held_at_end ? 1 : 0);  // [32,33) at 1, then 0 or 1 to the end
    r.finish();
    const auto v = row(r, c, 0);
    ASSERT_EQ(v.size(), 4u);
    EXPECT_DOUBLE_EQ(v[0], 0.8);
    EXPECT_DOUBLE_EQ(v[1], 1.0);
    EXPECT_DOUBLE_EQ(v[2], 0.2);
    EXPECT_DOUBLE_EQ(v[3], held_at_end ? 3.0 / 5.0 : 1.0 / 5.0);
    EXPECT_EQ(row(r, c, 1), (std::vector<double>{1, 0, 1, 1}));
  }
}

TEST(SeriesRecorder, MetricsOfOneKindAreIndependent) {
  SeriesRecorder r(10, 20);
  const auto k = r.declare_kind("nic", 1,
                                {MetricSpec{"tx", "bytes", Aggregation::kSum, ""},
                                 MetricSpec{"queue", "bytes", Aggregation::kTimeAverage, ""}});
  const auto c = r.add_component(k, 0);
  r.add(c, 0, 3, 100);
  r.set(c, 1, 10, 8);
  r.finish();
  EXPECT_EQ(row(r, c, 0), (std::vector<double>{100, 0}));
  EXPECT_EQ(row(r, c, 1), (std::vector<double>{0, 8}));
}

TEST(SeriesRecorder, RejectsBadDeclarations) {
  EXPECT_THROW(SeriesRecorder(0, 10), std::invalid_argument);
  EXPECT_THROW(SeriesRecorder(10, 0), std::invalid_argument);
  SeriesRecorder r(10, 20);
  EXPECT_THROW(r.declare_kind("", 1, {MetricSpec{"a", "", Aggregation::kSum, ""}}), std::invalid_argument);
  EXPECT_THROW(r.declare_kind("k", 1, {}), std::invalid_argument);
  EXPECT_THROW(
      r.declare_kind(
          "k", 1, {MetricSpec{"a", "", Aggregation::kSum, ""}, MetricSpec{"a", "", Aggregation::kMax, ""}}),
      std::invalid_argument);
  const auto k = r.declare_kind("k", 2, {MetricSpec{"a", "", Aggregation::kSum, ""}});
  EXPECT_THROW(r.declare_kind("k", 1, {MetricSpec{"b", "", Aggregation::kSum, ""}}), std::invalid_argument);
  EXPECT_THROW(r.add_component(k, 2), std::invalid_argument);
}

TEST(SeriesRecorder, SpreadSplitsByOverlapAndKeepsTheTotal) {
  SeriesRecorder r(10, 1000);
  const auto k = r.declare_kind("p", 1,
                                {MetricSpec{"bytes", "bytes", Aggregation::kSum, ""},
                                 MetricSpec{"busy", "fraction", Aggregation::kTimeAverage, ""}});
  const auto c = r.add_component(k, 0);
  r.add_spread(c, 0, 5, 25, 40);  // 5 in [0,10), 10 in [10,20), 5 in [20,30): 10, 20, 10
  r.add_spread(c, 0, 21, 24, 3);  // inside one sample
  r.add_spread(c, 1, 5, 25, 20);  // busy from 5 to 25: fractions 0.5, 1, 0.5
  r.finish(30);
  EXPECT_EQ(r.sample_count(), 3u);
  EXPECT_EQ(row(r, c, 0), (std::vector<double>{10, 20, 13}));
  EXPECT_EQ(row(r, c, 1), (std::vector<double>{0.5, 1, 0.5}));
}

TEST(SeriesRecorder, PeakHoldsNoLevelAndEarlierRecordsStillCount) {
  SeriesRecorder r(10, 100);
  const auto k = r.declare_kind("q", 1,
                                {MetricSpec{"depth", "bytes", Aggregation::kMax, ""},
                                 MetricSpec{"n", "events", Aggregation::kSum, ""}});
  const auto c = r.add_component(k, 0);
  r.peak(c, 0, 12, 7);
  r.peak(c, 0, 15, 3);
  r.add(c, 1, 35, 1);
  r.peak(c, 0, 2, 4);  // before the cursor: written straight to its sample
  r.add(c, 1, 11, 2);
  r.finish();
  EXPECT_EQ(row(r, c, 0), (std::vector<double>{4, 7, 0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(row(r, c, 1), (std::vector<double>{0, 2, 0, 1, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(r.used_samples(), 4u);
}

// A recorder's only component, of a kind "p" with one component: a packet's bytes, peak depth and queue area.
SeriesRecorder::Component packet_port(SeriesRecorder& r) {
  const auto k = r.declare_kind("p", 1,
                                {MetricSpec{"bytes", "bytes", Aggregation::kSum, ""},
                                 MetricSpec{"depth", "bytes", Aggregation::kMax, ""},
                                 MetricSpec{"area", "bytes", Aggregation::kTimeAverage, ""}});
  return r.add_component(k, 0);
}

TEST(SeriesRecorder, CurrentSampleRecordIsOnlyGivenForSpansWithinTheCurrentSample) {
  SeriesRecorder r(10, 100);
  const auto c = packet_port(r);
  EXPECT_FALSE(r.current_sample(c, 0, 5));  // no current sample before the first record
  r.add(c, 0, 12, 1);                       // the cursor is now [10, 20)
  EXPECT_TRUE(r.current_sample(c, 10, 19));
  EXPECT_TRUE(r.current_sample(c, 12, 13));
  EXPECT_TRUE(r.current_sample(c, 12, 12));   // one instant
  EXPECT_FALSE(r.current_sample(c, 10, 20));  // closed at t1: 20 is the next sample
  EXPECT_FALSE(r.current_sample(c, 13, 12));  // reversed
  EXPECT_FALSE(r.current_sample(c, 15, 21));  // leaves the sample
  EXPECT_FALSE(r.current_sample(c, 9, 15));   // starts before it
  EXPECT_FALSE(r.current_sample(c, 20, 25));  // the next sample
}

TEST(SeriesRecorder, CurrentSampleRecordGivesTheSameValuesAsThePerRecordCalls) {
  SeriesRecorder direct(10, 100), batched(10, 100);
  const std::vector<SeriesRecorder::Component> cs = {packet_port(direct), packet_port(batched)};
  // Packets as a commit records them: bytes over [start, end), the depth peak at t0, the queue area over
  // [t0, end); the batched recorder takes the one-check path whenever the span allows it.
  struct Packet {
    SimTime t0, start, end;
    double bytes, depth;
  };
  const std::vector<Packet> packets = {{1, 2, 4, 0.1, 3},    {3, 5, 9, 0.7, 5},    {8, 9, 14, 0.3, 2},
                                       {14, 15, 16, 1.9, 1}, {15, 17, 19, 0.2, 7}, {17, 18, 18, 0.25, 2},
                                       {16, 20, 20, 0.8, 3}, {41, 41, 42, 0.5, 4}, {43, 44, 47, 0.6, 8},
                                       {42, 45, 61, 0.9, 9}, {61, 62, 63, 0.4, 6}};
  int fast = 0;
  for (const Packet& p : packets) {
    const double area = p.bytes * static_cast<double>(p.end - p.t0);
    if (SeriesRecorder::SampleRecord rec = batched.current_sample(cs[1], p.t0, p.end)) {
      ++fast;
      rec.add(0, p.bytes);
      rec.peak(1, p.depth);
      rec.add(2, area);
    } else {
      batched.add_spread(cs[1], 0, p.start, p.end, p.bytes);
      batched.peak(cs[1], 1, p.t0, p.depth);
      batched.add_spread(cs[1], 2, p.t0, p.end, area);
    }
    direct.add_spread(cs[0], 0, p.start, p.end, p.bytes);
    direct.peak(cs[0], 1, p.t0, p.depth);
    direct.add_spread(cs[0], 2, p.t0, p.end, area);
  }
  // (3, 5, 9), (15, 17, 19), (17, 18, 18) and (43, 44, 47): the case under test was taken. Not (16, 20, 20):
  // its zero-length serialization records at 20, in the next sample.
  EXPECT_EQ(fast, 4);
  direct.finish();
  batched.finish();
  for (std::uint32_t m = 0; m < 3; ++m) EXPECT_EQ(row(direct, cs[0], m), row(batched, cs[1], m)) << m;
}

TEST(SeriesRecorder, GrowsPastItsInitialCapacityAndCoarsensExactly) {
  SeriesRecorder r(1, 100000);
  const auto k = r.declare_kind(
      "g", 2,
      {MetricSpec{"n", "events", Aggregation::kSum, ""}, MetricSpec{"peak", "bytes", Aggregation::kMax, ""},
       MetricSpec{"busy", "fraction", Aggregation::kTimeAverage, ""}},
      {ColumnSpec{"node", "", false, ""}});
  const double node = 3;
  const auto a = r.add_component(k, 1, "a", std::span<const double>(&node, 1));
  const auto b = r.add_component(k, 0, "b", std::span<const double>(&node, 1));
  for (SimTime t = 0; t < 1000; ++t) {
    r.add(a, 0, t, 1);
    r.peak(a, 1, t, static_cast<double>(t));
  }
  r.set(b, 2, 100, 1);  // busy from 100 on
  r.add(b, 0, 999, 5);
  EXPECT_EQ(r.used_samples(), 1000u);
  r.coarsen(100);
  r.finish(r.used_samples() * r.interval());
  EXPECT_EQ(r.interval(), 100u);
  ASSERT_EQ(r.sample_count(), 10u);
  const auto n = row(r, a, 0);
  EXPECT_EQ(n, std::vector<double>(10, 100));
  EXPECT_EQ(row(r, a, 1)[9], 999);
  EXPECT_EQ(row(r, b, 2)[0], 0);
  EXPECT_EQ(row(r, b, 2)[5], 1);
  EXPECT_EQ(row(r, b, 0)[9], 5);
  EXPECT_EQ(r.kinds()[0].column_values, (std::vector<double>{3, 3}));
}

// finish() without making the rows: copy_samples() and copy_tile() read the blocks and give the rows'
// values bit for bit (time averages divided by each sample's true length, zeros past the recorded grid);
// row() needs make_rows(); a checkpoint saves the same bytes either way.
TEST(SeriesRecorder, FinishWithoutRowsReadsTheSameValuesFromTheBlocks) {
  auto record = [](SeriesRecorder& r) {
    const auto k = r.declare_kind(
        "g", 3,
        {MetricSpec{"n", "events", Aggregation::kSum, ""}, MetricSpec{"peak", "bytes", Aggregation::kMax, ""},
         MetricSpec{"busy", "fraction", Aggregation::kTimeAverage, ""}});
    for (std::uint64_t id = 0; id < 3; ++id) {
      const auto c = r.add_component(k, id);
      for (SimTime t = id; t < 700; t += 7 + id) {
        r.add(c, 0, t, static_cast<double>(t % 11) / 3.0);
        r.peak(c, 1, t, static_cast<double>(t % 13));
        r.set(c, 2, t, static_cast<double>(t % 3) / 7.0);
      }
    }
  };
  SeriesRecorder rows(10, 2000), blocks(10, 2000);
  record(rows);
  record(blocks);
  rows.finish(995);  // a partial last sample (5 ps) and samples past the recorded grid
  blocks.finish(995, false);
  EXPECT_TRUE(rows.rows_made());
  EXPECT_FALSE(blocks.rows_made());
  EXPECT_THROW(blocks.row(0, 0, 0), std::logic_error);
  std::stringstream a, b;
  rows.save(a);
  blocks.save(b);
  EXPECT_EQ(a.str(), b.str());
  std::vector<double> got(rows.sample_count());
  for (std::uint32_t m = 0; m < 3; ++m) {
    for (std::uint32_t local = 0; local < 3; ++local) {
      blocks.copy_samples(0, m, local, 0, got.size(), got.data());
      const auto want = rows.row(0, m, local);
      ASSERT_EQ(got, std::vector<double>(want.begin(), want.end())) << m << " " << local;
      rows.copy_samples(0, m, local, 0, got.size(), got.data());
      ASSERT_EQ(got, std::vector<double>(want.begin(), want.end())) << m << " " << local;
    }
  }
  // copy_tile(): any subset of components, in any order, and a window of samples, the same values.
  const std::vector<std::uint32_t> locals = {2, 0, 1, 2};
  for (const auto& [s0, s1] :
       {std::pair<std::uint64_t, std::uint64_t>{0, rows.sample_count()}, {3, 99}, {97, 100}}) {
    const std::size_t width = s1 - s0 + 2;  // wider rows: the padding must stay untouched
    for (std::uint32_t m = 0; m < 3; ++m) {
      for (SeriesRecorder* r : {&rows, &blocks}) {
        std::vector<double> tile(locals.size() * width, -1.0);
        r->copy_tile(0, m, locals, s0, s1, tile.data(), width);
        for (std::size_t i = 0; i < locals.size(); ++i) {
          const auto want = rows.row(0, m, locals[i]);
          for (std::uint64_t s = s0; s < s1; ++s)
            ASSERT_EQ(tile[i * width + (s - s0)], want[s]) << m << " " << i << " " << s;
          ASSERT_EQ(tile[i * width + (s1 - s0)], -1.0);
        }
      }
    }
  }
  std::vector<double> small(10);
  EXPECT_THROW(blocks.copy_tile(0, 0, locals, 0, 20, small.data(), 5), std::invalid_argument);
  const std::vector<std::uint32_t> missing = {3};
  EXPECT_THROW(blocks.copy_tile(0, 0, missing, 0, 1, small.data(), 5), std::out_of_range);
  blocks.make_rows();
  for (std::uint32_t m = 0; m < 3; ++m) {
    const auto x = rows.metric_values(0, m);
    const auto y = blocks.metric_values(0, m);
    EXPECT_EQ(std::vector<double>(x.begin(), x.end()), std::vector<double>(y.begin(), y.end()));
  }
}

}  // namespace
}  // namespace warpsim
