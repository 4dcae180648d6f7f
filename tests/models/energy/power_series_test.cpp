// models/energy/power_series: power_w and energy_j derived from a finished recorder equal the energy model's
// figures from the same busy time and bytes (energy = integral of power), also when the last sample is cut
// short; a switch's static power is split over its ports; kinds without their input series are skipped.
#include "models/energy/power_series.hpp"

#include <gtest/gtest.h>

#include <array>
#include <span>

namespace warpsim::energy {
namespace {

PowerParams params() {
  PowerParams p;
  p.gpu_idle_w = 90;
  p.gpu_busy_w = 700;
  p.node_static_w = 1500;
  p.nic = {25, joules_per_byte_from_pj_per_bit(5)};
  p.nvswitch = {200, joules_per_byte_from_pj_per_bit(2)};
  p.network_switch = {750, joules_per_byte_from_pj_per_bit(10)};
  p.storage = {400, joules_per_byte_from_pj_per_bit(20)};
  return p;
}

double energy_of(const SeriesRecorder& r, SeriesRecorder::KindId k, std::uint32_t local) {
  const auto& kind = r.kinds()[k];
  const auto col = r.find_column(k, "energy_j");
  return kind.column_values[local * kind.columns.size() + *col];
}

TEST(PowerSeries, EnergyIsTheIntegralOfPowerAndMatchesTheTotalsModel) {
  constexpr SimTime us = 1'000'000;
  SeriesRecorder r(100 * us, 1'000'000 * us);
  const auto gpu = r.declare_kind("gpu", 1, {{"busy", "fraction", Aggregation::kTimeAverage, ""}},
                                  {{"node", "", false, ""}});
  const auto nic = r.declare_kind("nic", 1, {{"tx_bytes", "bytes", Aggregation::kSum, ""}});
  const auto port = r.declare_kind("switch_port", 3, {{"bytes", "bytes", Aggregation::kSum, ""}},
                                   {{"switch_lp", "", false, ""}, {"tier", "", false, ""}});
  const auto storage = r.declare_kind(
      "storage", 1,
      {{"read_bytes", "bytes", Aggregation::kSum, ""}, {"write_bytes", "bytes", Aggregation::kSum, ""}});
  const auto other = r.declare_kind("phold_lp", 1, {{"events", "events", Aggregation::kSum, ""}});
  const double node = 3;
  const auto g = r.add_component(gpu, 0, "", std::span<const double>(&node, 1));
  const auto n = r.add_component(nic, 0);
  const std::array<std::array<double, 2>, 3> ports = {{{7, 0}, {9, 1}, {9, 1}}};  // NVSwitch; a 2-port switch
  SeriesRecorder::Component p[3];
  for (std::uint64_t i = 0; i < 3; ++i) p[i] = r.add_component(port, i, "", ports[i]);
  const auto st = r.add_component(storage, 0);
  r.add_component(other, 0);
  // Busy 30..180 us and 220..250 us: 180 us in all, crossing samples and the cut-short last one.
  r.set(g, 0, 30 * us, 1);
  r.set(g, 0, 180 * us, 0);
  r.set(g, 0, 220 * us, 1);
  r.add_spread(n, 0, 10 * us, 240 * us, 1e6);
  r.add(p[1], 0, 50 * us, 4e5);
  r.add_spread(p[0], 0, 0, 250 * us, 2e6);
  r.add(st, 0, 120 * us, 3e6);
  r.add(st, 1, 245 * us, 1e6);
  r.finish(250 * us);  // samples of 100, 100 and 50 us
  ASSERT_EQ(r.sample_count(), 3u);

  const PowerParams pp = params();
  const PowerSeriesTotals totals = add_power_series(r, pp);
  const double seconds = 250e-6;
  const auto gpu_power = r.row(gpu, *r.find_metric(gpu, "power_w"), 0);
  EXPECT_DOUBLE_EQ(gpu_power[2], pp.gpu_idle_w + (pp.gpu_busy_w - pp.gpu_idle_w) * 30.0 / 50.0);
  EXPECT_NEAR(energy_of(r, gpu, 0), pp.gpu_idle_w * seconds + (pp.gpu_busy_w - pp.gpu_idle_w) * 180e-6,
              1e-12);
  EXPECT_NEAR(energy_of(r, nic, 0), pp.nic.static_w * seconds + pp.nic.joules_per_byte * 1e6, 1e-12);
  EXPECT_NEAR(energy_of(r, port, 0), pp.nvswitch.static_w * seconds + pp.nvswitch.joules_per_byte * 2e6,
              1e-12);
  EXPECT_NEAR(energy_of(r, port, 1),
              pp.network_switch.static_w / 2 * seconds + pp.network_switch.joules_per_byte * 4e5, 1e-12);
  EXPECT_NEAR(energy_of(r, port, 2), pp.network_switch.static_w / 2 * seconds, 1e-12);
  EXPECT_NEAR(energy_of(r, storage, 0), pp.storage.static_w * seconds + pp.storage.joules_per_byte * 4e6,
              1e-12);
  EXPECT_FALSE(r.find_metric(other, "power_w"));
  EXPECT_EQ(totals.nodes, 4u);
  ASSERT_EQ(totals.component_joules.size(), 6u);
  EXPECT_EQ(totals.component_joules[0].first, std::uint64_t{gpu} << 48);
  EXPECT_EQ(totals.component_joules[0].second, energy_of(r, gpu, 0));
  EXPECT_EQ(r.kinds()[gpu].columns.back().unit, "J");
  EXPECT_EQ(r.kinds()[gpu].metrics.back().unit, "W");
}

TEST(PowerSeries, DerivedSeriesNeedAFinishedRecorder) {
  SeriesRecorder r(10, 100);
  r.declare_kind("gpu", 1, {{"busy", "fraction", Aggregation::kTimeAverage, ""}});
  EXPECT_THROW(add_power_series(r, params()), std::logic_error);
}

}  // namespace
}  // namespace warpsim::energy
