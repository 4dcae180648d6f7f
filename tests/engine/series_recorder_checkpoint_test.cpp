// SeriesRecorder::save/load: a recorder saved mid-run and restored into a freshly declared one finishes with
// exactly the values of an uninterrupted one (also across coarsen() and after finish()); malformed, truncated
// or mismatching checkpoints throw std::runtime_error and leave the recorder unchanged.
#include <gtest/gtest.h>

#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/series_recorder.hpp"

namespace warpsim {
namespace {

struct Recording {
  SeriesRecorder rec{10, 100000};
  SeriesRecorder::Component a{}, b{}, p{};
  Recording() {
    const auto g = rec.declare_kind(
        "gpu", 3,
        {MetricSpec{"n", "events", Aggregation::kSum, ""}, MetricSpec{"peak", "bytes", Aggregation::kMax, ""},
         MetricSpec{"busy", "fraction", Aggregation::kTimeAverage, ""}});
    const auto k = rec.declare_kind("port", 1, {MetricSpec{"bytes", "bytes", Aggregation::kSum, ""}});
    a = rec.add_component(g, 2, "a");
    b = rec.add_component(g, 0, "b");
    p = rec.add_component(k, 0, "p");
  }
};

// A deterministic mix of every kind of record over simulated times [from, to).
void record(Recording& s, SimTime from, SimTime to) {
  for (SimTime t = from; t < to; t += 7) {
    s.rec.add(s.a, 0, t, 1);
    s.rec.peak(s.a, 1, t, static_cast<double>(t % 97));
    s.rec.add_spread(s.b, 2, t, t + 25, 5);  // crosses sample boundaries
    if (t % 3 == 0) s.rec.set(s.b, 1, t, static_cast<double>(t % 11));
    if (t % 5 == 0) s.rec.set(s.a, 2, t, t % 2 == 0 ? 1.0 : 0.0);
    s.rec.add_spread(s.p, 0, t, t + 3, 1500);
  }
}

std::vector<double> everything(const Recording& s) {
  std::vector<double> out;
  for (std::uint32_t k = 0; k < s.rec.kinds().size(); ++k) {
    const auto& kind = s.rec.kinds()[k];
    for (std::uint32_t m = 0; m < kind.metrics.size(); ++m)
      for (std::uint32_t local = 0; local < kind.ids.size(); ++local) {
        const auto row = s.rec.row(k, m, local);
        out.insert(out.end(), row.begin(), row.end());
      }
  }
  return out;
}

std::string saved(const Recording& s) {
  std::ostringstream out;
  s.rec.save(out);
  return out.str();
}

void restore(Recording& s, const std::string& bytes) {
  std::istringstream in(bytes);
  s.rec.load(in);
}

TEST(SeriesRecorderCheckpoint, RestoredMidRunFinishesIdentically) {
  Recording whole;
  record(whole, 0, 5003);
  record(whole, 5003, 9000);
  whole.rec.finish(9000);

  Recording first;
  record(first, 0, 5003);
  const std::string bytes = saved(first);
  Recording second;
  restore(second, bytes);
  record(second, 5003, 9000);
  second.rec.finish(9000);
  EXPECT_EQ(second.rec.used_samples(), whole.rec.used_samples());
  EXPECT_EQ(everything(second), everything(whole));
  // Saving is deterministic: the same state gives the same bytes.
  Recording again;
  restore(again, bytes);
  EXPECT_EQ(saved(again), bytes);
}

TEST(SeriesRecorderCheckpoint, RestoredAfterCoarsenAndAfterFinish) {
  Recording whole;
  record(whole, 0, 3000);
  whole.rec.coarsen(4);
  record(whole, 3000, 6000);
  whole.rec.finish(6000);

  Recording first;
  record(first, 0, 3000);
  first.rec.coarsen(4);
  Recording second;
  restore(second, saved(first));
  EXPECT_EQ(second.rec.interval(), 40u);
  record(second, 3000, 6000);
  second.rec.finish(6000);
  EXPECT_EQ(everything(second), everything(whole));

  Recording third;
  restore(third, saved(second));
  ASSERT_TRUE(third.rec.finished());
  EXPECT_EQ(everything(third), everything(whole));
}

void expect_error(Recording& s, const std::string& bytes, const std::string& part) {
  const std::string before = saved(s);
  try {
    restore(s, bytes);
    FAIL() << "no error for a checkpoint expected to mention '" << part << "'";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
  EXPECT_EQ(saved(s), before) << "a failed load changed the recorder";
}

TEST(SeriesRecorderCheckpoint, BadInputThrowsAndChangesNothing) {
  Recording src;
  record(src, 0, 2000);
  const std::string bytes = saved(src);
  Recording target;
  record(target, 0, 100);
  expect_error(target, "", "truncated");
  expect_error(target, "not a checkpoint at all", "bad magic");
  for (const std::size_t cut : {std::size_t{20}, std::size_t{70}, bytes.size() / 2, bytes.size() - 1})
    expect_error(target, bytes.substr(0, cut), "truncated");
  std::string corrupt = bytes;
  corrupt[bytes.size() - 3] ^= 0x5a;
  expect_error(target, corrupt, "trailer");

  SeriesRecorder other(10, 100000);
  other.declare_kind("gpu", 3, {MetricSpec{"n", "events", Aggregation::kSum, ""}});
  std::istringstream in(bytes);
  EXPECT_THROW(other.load(in), std::runtime_error);

  Recording different_ids;
  std::ostringstream out;
  SeriesRecorder r(10, 100000);
  const auto g = r.declare_kind(
      "gpu", 3,
      {MetricSpec{"n", "events", Aggregation::kSum, ""}, MetricSpec{"peak", "bytes", Aggregation::kMax, ""},
       MetricSpec{"busy", "fraction", Aggregation::kTimeAverage, ""}});
  r.declare_kind("port", 1, {MetricSpec{"bytes", "bytes", Aggregation::kSum, ""}});
  r.add_component(g, 1, "x");
  r.add_component(g, 0, "b");
  r.save(out);
  expect_error(different_ids, out.str(), "ids differ");
}

}  // namespace
}  // namespace warpsim
