// TCO and carbon arithmetic (see tco.hpp and docs/energy-cost.md).
#include "models/energy/tco.hpp"

namespace warpsim::energy {

CostFigures CostFigures::scaled(double f) const {
  CostFigures out = *this;
  out.capex_usd *= f;
  out.electricity_usd *= f;
  out.embodied_kgco2e *= f;
  out.operating_kgco2e *= f;
  out.it_joules *= f;
  out.facility_joules *= f;
  return out;
}

UnitCost inventory_cost(const CostParams& c, const ComponentTotals& inventory) {
  UnitCost sum;
  for (std::size_t k = 0; k < kKinds; ++k) {
    const auto n = static_cast<double>(inventory.kinds[k].count);
    sum.capex_usd += n * c.kinds[k].capex_usd;
    sum.embodied_kgco2e += n * c.kinds[k].embodied_kgco2e;
  }
  const auto nodes = static_cast<double>(inventory.nodes);
  sum.capex_usd += nodes * c.node.capex_usd;
  sum.embodied_kgco2e += nodes * c.node.embodied_kgco2e;
  return sum;
}

CostFigures cost_of(const CostParams& c, const ComponentTotals& inventory, double wall_s, double it_joules) {
  const UnitCost hw = inventory_cost(c, inventory);
  // Straight-line amortization: the run is charged the share of the hardware's life it occupies.
  const double life_share = wall_s / (c.amortization_years * kSecondsPerYear);
  CostFigures f;
  f.capex_usd = hw.capex_usd * life_share;
  f.embodied_kgco2e = hw.embodied_kgco2e * life_share;
  f.it_joules = it_joules;
  f.facility_joules = it_joules * c.pue;
  const double kwh = f.facility_joules / kJoulesPerKwh;
  f.electricity_usd = kwh * c.electricity_usd_per_kwh;
  f.operating_kgco2e = kwh * c.grid_gco2e_per_kwh / 1000;
  return f;
}

}  // namespace warpsim::energy
