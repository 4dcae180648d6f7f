// SeriesRecorder semantics: counters sum per interval, gauges give the interval's peak or time-weighted
// mean with the level carried across intervals, the last interval may be partial, and bad declarations throw.
#include "engine/series_recorder.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace warpsim
