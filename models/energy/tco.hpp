// Total cost of ownership and carbon of a training run: hardware capital cost and embodied carbon
// amortized linearly over the hardware's life, and electricity and operating carbon from the simulated IT
// energy times the facility's PUE. The arithmetic is written out by hand in docs/energy-cost.md, and the
// tests check the example there against it.
#pragma once

#include <array>
#include <cstdint>

#include "models/energy/power_model.hpp"

namespace warpsim::energy {

// Per-unit prices and footprints of each component kind, plus the per-node host (0 = not counted).
struct UnitCost {
  double capex_usd = 0;
  double embodied_kgco2e = 0;
};

struct CostParams {
  std::array<UnitCost, kKinds> kinds{};  // indexed by Kind
  UnitCost node;                         // node chassis/host without GPUs, NICs (NVSwitch included)
  double amortization_years = 0;         // hardware life for capex and embodied carbon
  double pue = 1;                        // facility energy / IT energy
  double electricity_usd_per_kwh = 0;
  double grid_gco2e_per_kwh = 0;
  UnitCost& operator[](Kind k) { return kinds[static_cast<std::size_t>(k)]; }
  const UnitCost& operator[](Kind k) const { return kinds[static_cast<std::size_t>(k)]; }
};

// Money and carbon over some wall time: capex share and electricity; embodied share and operating carbon.
struct CostFigures {
  double capex_usd = 0, electricity_usd = 0;
  double embodied_kgco2e = 0, operating_kgco2e = 0;
  double it_joules = 0, facility_joules = 0;
  double total_usd() const { return capex_usd + electricity_usd; }
  double total_kgco2e() const { return embodied_kgco2e + operating_kgco2e; }
  CostFigures scaled(double factor) const;
};

// The hardware inventory's capex and embodied carbon (whole cluster).
UnitCost inventory_cost(const CostParams& c, const ComponentTotals& inventory);
// Figures for `wall_s` seconds of the cluster drawing `it_joules` of IT energy over that time.
CostFigures cost_of(const CostParams& c, const ComponentTotals& inventory, double wall_s, double it_joules);

constexpr double kSecondsPerYear = 365.25 * 86400;
constexpr double kJoulesPerKwh = 3.6e6;

}  // namespace warpsim::energy
