// Power and energy models: energy is the integral of the power series on any sampling grid (within 0.1%),
// an idle cluster uses idle power x time, the cluster totals of a real simulation, and the TCO/carbon
// arithmetic of the example worked by hand in docs/energy-cost.md.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "engine/kernel/engine.hpp"
#include "models/cluster/cluster_model.hpp"
#include "models/energy/cluster_totals.hpp"
#include "models/energy/power_model.hpp"
#include "models/energy/tco.hpp"
#include "partition/block_map.hpp"

namespace warpsim::energy {
namespace {

TEST(PowerModel, DefaultsFollowTheGpuProfiles) {
  const PowerParams h100 = default_power_params("H100-SXM");
  EXPECT_EQ(h100.gpu_busy_w, 700);  // the profile's TDP
  EXPECT_GT(h100.gpu_idle_w, 0);
  EXPECT_LT(h100.gpu_idle_w, h100.gpu_busy_w);
  EXPECT_EQ(default_power_params("B200").gpu_busy_w, 1000);
  EXPECT_EQ(default_power_params("A100-80GB").gpu_busy_w, 400);
  EXPECT_THROW(default_power_params("V100", "job.gpu_type"), std::invalid_argument);
}

TEST(PowerModel, GpuCurveIsLinearBetweenIdleAndBusy) {
  PowerParams p;
  p.gpu_idle_w = 100;
  p.gpu_busy_w = 700;
  EXPECT_DOUBLE_EQ(gpu_power_w(p, 0), 100);
  EXPECT_DOUBLE_EQ(gpu_power_w(p, 0.5), 400);
  EXPECT_DOUBLE_EQ(gpu_power_w(p, 1), 700);
  EXPECT_DOUBLE_EQ(gpu_power_w(p, 1.5), 700);  // clamped
}

// A GPU busy in irregular intervals, sampled on grids of several sizes: the integral of the power series
// (busy fraction per sample -> power) equals the energy from its total busy time.
TEST(PowerModel, EnergyIsTheIntegralOfThePowerSeries) {
  const PowerParams p = default_power_params("H100-SXM");
  // Busy intervals [start, end) in microseconds over a 10 ms run.
  const std::vector<std::pair<double, double>> busy = {{0, 730}, {1200, 4100}, {4150, 4160}, {6000, 9999}};
  const double run_us = 10000;
  double busy_us = 0;
  for (auto [a, b] : busy) busy_us += b - a;
  ComponentTotals totals;
  totals[Kind::kGpu] = {1, static_cast<std::uint64_t>(busy_us * 1e6), 0};
  const double exact = run_energy(p, totals, run_us * 1e-6).joules(Kind::kGpu);
  for (double interval_us : {1.0, 7.0, 100.0, 333.0, 2500.0}) {
    const auto samples = static_cast<std::size_t>(std::ceil(run_us / interval_us));
    std::vector<double> util(samples, 0.0);
    for (std::size_t s = 0; s < samples; ++s) {
      const double lo = s * interval_us, hi = std::min(run_us, lo + interval_us);
      double b = 0;
      for (auto [x, y] : busy) b += std::max(0.0, std::min(hi, y) - std::max(lo, x));
      util[s] = b / (hi - lo);
    }
    const double last = run_us - (samples - 1) * interval_us;
    const double integral = integrate_joules(gpu_power_series(p, util), interval_us * 1e-6, last * 1e-6);
    EXPECT_NEAR(integral, exact, exact * 1e-3) << "interval " << interval_us << " us";
  }
}

TEST(PowerModel, LinkEnergyIsStaticPlusPerByte) {
  const LinkPower nic{25, joules_per_byte_from_pj_per_bit(5)};
  // 1 GB per 10 ms sample for 1 s.
  const std::vector<double> bytes(100, 1e9);
  const double integral = integrate_joules(link_power_series(nic, bytes, 0.01), 0.01);
  ComponentTotals totals;
  totals[Kind::kNic] = {1, 0, static_cast<std::uint64_t>(1e11)};
  PowerParams p;
  p.nic = nic;
  EXPECT_NEAR(integral, run_energy(p, totals, 1.0).joules(Kind::kNic), 1e-6);
  EXPECT_NEAR(integral, 25 + 1e11 * 8 * 5e-12, 1e-6);
}

cluster::ClusterParams small_cluster() {
  cluster::ClusterParams p;
  p.nodes = 4;
  p.gpus_per_node = 4;
  p.tiers = 2;
  p.radix = 8;
  p.storage_targets = 2;
  return p;
}

// An idle cluster simulated for 1 ms (no GPU ever computes): its energy is idle power x time, and the
// totals count every component once.
TEST(ClusterEnergy, IdleClusterUsesIdlePowerTimesTime) {
  const cluster::ClusterParams params = small_cluster();
  cluster::ClusterModel model(params, std::make_shared<cluster::IdleProgram>());
  BlockLpMap map(model.lp_count(), 1);
  EngineConfig config;
  config.sync = SyncMode::kSequential;
  config.end_time = kPicosPerSecond / 1000;
  Engine engine(model, map, config, MPI_COMM_SELF);
  engine.run();
  const ComponentTotals t = local_totals(model);
  EXPECT_EQ(t[Kind::kGpu].count, 16u);
  EXPECT_EQ(t[Kind::kGpu].busy_ps, 0u);
  EXPECT_EQ(t[Kind::kNic].count, 16u);
  EXPECT_EQ(t[Kind::kNvSwitch].count, 4u);
  EXPECT_GT(t[Kind::kSwitch].count, 0u);
  EXPECT_EQ(t[Kind::kStorage].count, 2u);
  EXPECT_EQ(t.nodes, 4u);
  std::uint64_t lps = t.nodes;  // NVSwitches = nodes here
  for (auto k : {Kind::kGpu, Kind::kNic, Kind::kSwitch, Kind::kStorage}) lps += t[k].count;
  EXPECT_EQ(lps, model.lp_count());
  const PowerParams p = default_power_params("H100-SXM");
  const double seconds = 1e-3;
  const double idle_w = 16 * p.gpu_idle_w + 4 * p.node_static_w + 16 * p.nic.static_w +
                        4 * p.nvswitch.static_w + t[Kind::kSwitch].count * p.network_switch.static_w +
                        2 * p.storage.static_w;
  EXPECT_NEAR(run_energy(p, t, seconds).total_joules(), idle_w * seconds, idle_w * seconds * 1e-12);
}

// The example worked by hand in docs/energy-cost.md ("Hand calculation"): 16,384 H100 GPUs in 2,048
// nodes, 16,384 NICs, 2,048 switches (512 leaves, 512 aggregation, 1,024 cores), one 10 s step drawing 180 MJ
// of IT energy; the figures are the ones the document writes down.
TEST(Tco, ReproducesTheHandCalculationInTheDocs) {
  ComponentTotals inv;
  inv[Kind::kGpu].count = 16384;
  inv[Kind::kNic].count = 16384;
  inv[Kind::kNvSwitch].count = 2048;
  inv[Kind::kSwitch].count = 2048;
  inv.nodes = 2048;
  CostParams c;
  c[Kind::kGpu] = {25000, 150};
  c[Kind::kNic] = {1500, 10};
  c[Kind::kSwitch] = {40000, 500};
  c.node = {50000, 2500};
  c.amortization_years = 4;
  c.pue = 1.2;
  c.electricity_usd_per_kwh = 0.08;
  c.grid_gco2e_per_kwh = 400;
  const UnitCost hw = inventory_cost(c, inv);
  EXPECT_NEAR(hw.capex_usd, 618'496'000, 0.5);
  EXPECT_NEAR(hw.embodied_kgco2e, 8'765'440, 0.5);
  const CostFigures f = cost_of(c, inv, 10.0, 180e6);
  EXPECT_NEAR(f.capex_usd, 48.9974, 1e-4);
  EXPECT_NEAR(f.facility_joules, 216e6, 1e-3);
  EXPECT_NEAR(f.electricity_usd, 4.8, 1e-9);
  EXPECT_NEAR(f.operating_kgco2e, 24.0, 1e-9);
  EXPECT_NEAR(f.embodied_kgco2e, 0.694400, 1e-6);
  EXPECT_NEAR(f.total_usd(), 53.7974, 1e-4);
}

}  // namespace
}  // namespace warpsim::energy
