// CostSpec validation (see cost_spec.hpp).
#include "experiment/spec/cost_spec.hpp"

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

#include "experiment/spec/spec_text.hpp"

namespace warpsim::spec {

namespace {

std::string number(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

// A present value must be finite and >= `min` (and <= `max`).
void check(std::string_view prefix, const char* field, bool present, double value, double min,
           double max = 1e300) {
  if (!present) return;
  if (!std::isfinite(value) || value < min || value > max) {
    std::string range = max < 1e300 ? "in [" + number(min) + ", " + number(max) + "]" : ">= " + number(min);
    throw std::invalid_argument(std::string(prefix) + "." + field + ": must be " + range + " (got " +
                                number(value) + ")");
  }
}

void require(std::string_view prefix, const char* field, bool present, const char* what) {
  if (!present) throw std::invalid_argument(std::string(prefix) + "." + field + ": required (" + what + ")");
}

}  // namespace

void validate_cost_spec(const CostSpec& c, std::string_view prefix) {
  const std::string power = std::string(prefix) + ".power";
  const PowerSpec& p = c.power();
#define WARPSIM_CHECK_POWER(f) check(power, #f, p.has_##f(), p.f(), 0)
  WARPSIM_CHECK_POWER(gpu_idle_w);
  WARPSIM_CHECK_POWER(gpu_busy_w);
  WARPSIM_CHECK_POWER(node_static_w);
  WARPSIM_CHECK_POWER(nic_static_w);
  WARPSIM_CHECK_POWER(nic_pj_per_bit);
  WARPSIM_CHECK_POWER(nvswitch_static_w);
  WARPSIM_CHECK_POWER(nvswitch_pj_per_bit);
  WARPSIM_CHECK_POWER(switch_static_w);
  WARPSIM_CHECK_POWER(switch_pj_per_bit);
  WARPSIM_CHECK_POWER(storage_static_w);
  WARPSIM_CHECK_POWER(storage_pj_per_bit);
#undef WARPSIM_CHECK_POWER
#define WARPSIM_CHECK_COST(f) check(prefix, #f, c.has_##f(), c.f(), 0)
  WARPSIM_CHECK_COST(gpu_capex_usd);
  WARPSIM_CHECK_COST(node_capex_usd);
  WARPSIM_CHECK_COST(nic_capex_usd);
  WARPSIM_CHECK_COST(switch_capex_usd);
  WARPSIM_CHECK_COST(storage_capex_usd);
  WARPSIM_CHECK_COST(gpu_embodied_kgco2e);
  WARPSIM_CHECK_COST(node_embodied_kgco2e);
  WARPSIM_CHECK_COST(nic_embodied_kgco2e);
  WARPSIM_CHECK_COST(switch_embodied_kgco2e);
  WARPSIM_CHECK_COST(storage_embodied_kgco2e);
  WARPSIM_CHECK_COST(electricity_usd_per_kwh);
  WARPSIM_CHECK_COST(grid_gco2e_per_kwh);
#undef WARPSIM_CHECK_COST
  if (p.has_gpu_idle_w() && p.has_gpu_busy_w() && p.gpu_idle_w() > p.gpu_busy_w()) {
    throw std::invalid_argument(power + ".gpu_idle_w: exceeds gpu_busy_w (" + number(p.gpu_idle_w()) + " > " +
                                number(p.gpu_busy_w()) + ")");
  }
  require(prefix, "amortization_years", c.has_amortization_years(), "hardware life, years");
  check(prefix, "amortization_years", true, c.amortization_years(), 0.01, 100);
  require(prefix, "pue", c.has_pue(), "facility power usage effectiveness, >= 1");
  check(prefix, "pue", true, c.pue(), 1, 10);
  require(prefix, "electricity_usd_per_kwh", c.has_electricity_usd_per_kwh(), "electricity price");
  require(prefix, "grid_gco2e_per_kwh", c.has_grid_gco2e_per_kwh(), "grid carbon intensity");
  check(prefix, "training_tokens", c.has_training_tokens(), c.training_tokens(), 1);
}

CostSpec parse_cost_spec(std::string_view text, std::string_view origin) {
  CostSpec c;
  parse_text_or_json(text, c, "cost spec", origin);
  validate_cost_spec(c);
  return c;
}

}  // namespace warpsim::spec
