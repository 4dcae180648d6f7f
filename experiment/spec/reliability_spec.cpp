// ReliabilitySpec validation (see reliability_spec.hpp).
#include "experiment/spec/reliability_spec.hpp"

#include <cmath>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

namespace warpsim::spec {

namespace {

constexpr std::string_view kComponents[] = {"gpu", "node", "nic", "nvswitch", "switch", "storage"};

std::string number(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

[[noreturn]] void fail(std::string_view prefix, const std::string& field, const std::string& message) {
  throw std::invalid_argument(std::string(prefix) + "." + field + ": " + message);
}

}  // namespace

bool is_failure_component(std::string_view name) {
  for (auto c : kComponents)
    if (c == name) return true;
  return false;
}

void validate_reliability_spec(const ReliabilitySpec& r, std::string_view prefix) {
  std::set<std::string> seen;
  for (int i = 0; i < r.failures_size(); ++i) {
    const FailureRate& f = r.failures(i);
    const std::string field = "failures[" + std::to_string(i) + "]";
    if (!is_failure_component(f.component())) {
      fail(prefix, field + ".component",
           "unknown component '" + f.component() + "' (known: gpu, node, nic, nvswitch, switch, storage)");
    }
    if (!seen.insert(f.component()).second)
      fail(prefix, field + ".component", "'" + f.component() + "' twice");
    if (!(f.mtbf_hours() > 0) || !std::isfinite(f.mtbf_hours())) {
      fail(prefix, field + ".mtbf_hours", "must be > 0 (got " + number(f.mtbf_hours()) + ")");
    }
  }
  if (r.failures_size() > 0 && !r.has_restart_seconds()) {
    fail(prefix, "restart_seconds", "required with failures (failure to resumed training, seconds)");
  }
  if (r.has_restart_seconds() && (!(r.restart_seconds() >= 0) || !std::isfinite(r.restart_seconds()))) {
    fail(prefix, "restart_seconds", "must be >= 0 (got " + number(r.restart_seconds()) + ")");
  }
  if (r.has_checkpoint_seconds() &&
      (!(r.checkpoint_seconds() >= 0) || !std::isfinite(r.checkpoint_seconds()))) {
    fail(prefix, "checkpoint_seconds", "must be >= 0 (got " + number(r.checkpoint_seconds()) + ")");
  }
  const StragglerSpec& s = r.stragglers();
  if (!(s.gpu_fraction() >= 0 && s.gpu_fraction() <= 1)) {
    fail(prefix, "stragglers.gpu_fraction", "must be in [0, 1] (got " + number(s.gpu_fraction()) + ")");
  }
  if (s.gpu_fraction() > 0 && !(s.slowdown() >= 1 && s.slowdown() <= 100)) {
    fail(prefix, "stragglers.slowdown", "must be in [1, 100] (got " + number(s.slowdown()) + ")");
  }
  if (r.has_simulate_failures()) {
    const SimulateFailures& f = r.simulate_failures();
    if (r.failures_size() == 0) fail(prefix, "simulate_failures", "needs failures (no failure rates given)");
    if (!(f.hours() > 0 && f.hours() <= 5000)) {
      fail(prefix, "simulate_failures.hours", "must be in (0, 5000] (got " + number(f.hours()) + ")");
    }
    if (!(f.repair_hours() >= 0 && std::isfinite(f.repair_hours()))) {
      fail(prefix, "simulate_failures.repair_hours", "must be >= 0 (got " + number(f.repair_hours()) + ")");
    }
    const CorrelatedFailures& c = f.correlated();
    if (!(c.probability() >= 0 && c.probability() < 1)) {
      fail(prefix, "simulate_failures.correlated.probability",
           "must be in [0, 1) (got " + number(c.probability()) + ")");
    }
    if (c.probability() > 0 && !(c.within_hours() > 0 && std::isfinite(c.within_hours()))) {
      fail(prefix, "simulate_failures.correlated.within_hours",
           "must be > 0 (got " + number(c.within_hours()) + ")");
    }
  }
  if (r.monte_carlo_trials() > 100000) {
    fail(prefix, "monte_carlo_trials", "at most 100000 (got " + std::to_string(r.monte_carlo_trials()) + ")");
  }
}

}  // namespace warpsim::spec
