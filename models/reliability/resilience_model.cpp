// The resilience model: LP layout and parameters (see resilience_model.hpp).
#include "models/reliability/resilience_model.hpp"

#include <numeric>
#include <stdexcept>

namespace warpsim::reliability {

std::string_view to_string(Component c) {
  switch (c) {
    case Component::kGpu:
      return "gpu";
    case Component::kNode:
      return "node";
    case Component::kNic:
      return "nic";
    case Component::kNvSwitch:
      return "nvswitch";
    case Component::kSwitch:
      return "switch";
    case Component::kStorage:
      return "storage";
    default:
      return "unknown";
  }
}

double DomainGroup::rate_per_s() const {
  double rate = 0;
  for (const FailureClass& c : classes) rate += c.per_domain / c.mtbf_s;
  return rate;
}

double ResilienceParams::system_rate_per_s() const {
  double rate = 0;
  for (const DomainGroup& g : groups) rate += g.domains * g.rate_per_s();
  return rate;
}

std::uint64_t ResilienceParams::domain_count() const {
  std::uint64_t n = 0;
  for (const DomainGroup& g : groups) n += g.domains;
  return n;
}

ResilienceModel::ResilienceModel(const ResilienceParams& params, bool record)
    : params_(params), timeline_(params, record), domains_(params, kJobLp + 1, kJobLp) {
  if (!(params.horizon_s > 0)) throw std::invalid_argument("resilience model: the horizon must be > 0");
  // 2^64 ps is about 213 days of engine time.
  if (params.horizon_s > 5000 * 3600.0) throw std::invalid_argument("resilience model: horizon above 5000 h");
  if (params.repair_s < 0) throw std::invalid_argument("resilience model: negative repair time");
  if (params.repeat_probability < 0 || params.repeat_probability >= 1)
    throw std::invalid_argument("resilience model: repeat probability outside [0, 1)");
}

LpType& ResilienceModel::type(std::size_t index) {
  if (index == 0) return timeline_;
  return domains_;
}

double ResilienceOutcome::goodput() const {
  if (last_checkpoint_end_ps == 0) return 0;
  const SimTime g = std::gcd(useful_ps, last_checkpoint_end_ps);
  return static_cast<double>(useful_ps / g) / static_cast<double>(last_checkpoint_end_ps / g);
}

ResilienceOutcome outcome_of(const JobTimelineState& s, const JobTimelineLp& lp, SimTime horizon) {
  ResilienceOutcome o;
  o.horizon_ps = horizon;
  o.failures = s.failures;
  o.repeats = s.repeats;
  for (std::size_t i = 0; i < kPhases; ++i) o.failures_in_phase[i] = s.failures_in_phase[i];
  o.steps_run = s.steps_run;
  o.saved_steps = s.saved_steps;
  o.progress_steps = s.saved_steps + s.steps_since_checkpoint;
  o.useful_ps = s.saved_steps * lp.step_ps();
  o.lost_ps = s.lost_ps;
  o.restart_ps = s.restart_ps;
  o.checkpoint_ps = s.checkpoint_ps;
  o.wait_ps = s.wait_ps;
  o.waits = s.waits;
  const bool down = s.phase == Phase::kRestarting || s.phase == Phase::kWaiting;
  const SimTime since = down ? s.phase_start : s.segment_start;
  o.in_flight_ps = horizon - since;
  o.last_checkpoint_end_ps = s.last_checkpoint_end;
  return o;
}

}  // namespace warpsim::reliability
