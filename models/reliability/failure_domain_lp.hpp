// Failure-domain LP of the resilience model (resilience_model.hpp): one per node of the job (its GPUs,
// NICs, NVSwitches and the host), per fabric switch and per storage target, as the parameters list them.
// Its components' failures form one Poisson process at the domain's summed rate: each kNextFailure event
// draws which component failed (in proportion to the rates), tells the job timeline (kFailure) and
// schedules the next one after an exponential delay. With correlated failures, a failure of a domain whose
// group repeats is followed with probability p by a repeat of the same component within the window.
// Draws come from the event's counter-based stream, so a re-executed event draws the same numbers and
// reverse only undoes the two counters.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/slotted_lp_type.hpp"
#include "models/reliability/resilience_events.hpp"
#include "models/reliability/resilience_params.hpp"

namespace warpsim::reliability {

struct FailureDomainState {
  std::uint64_t failures;  // failures this domain reported (repeats included)
  std::uint64_t repeats;   // of which correlated repeats
};

class FailureDomainLp final : public SlottedLpType<FailureDomainState> {
 public:
  // Domains are LPs first_domain_lp .. first_domain_lp + params.domain_count() - 1, group after group;
  // failures go to LP `job_lp`.
  FailureDomainLp(const ResilienceParams& params, LpId first_domain_lp, LpId job_lp);
  std::string_view name() const override { return "failure_domain"; }
  void init(std::uint32_t slot, LpContext& ctx) override;
  void forward(std::uint32_t slot, LpContext& ctx) override;
  void reverse(std::uint32_t slot, LpContext& ctx) override;
  std::uint64_t digest(std::uint32_t slot) const override;

 private:
  struct Group {
    LpId first_lp = 0;
    std::uint32_t domains = 0;
    std::vector<FailureClass> classes;
    std::vector<double> rates;  // per class: per_domain / mtbf_s
    double rate = 0;            // per domain, per second
    bool repeats = false;
  };
  const Group& group_of(LpId lp) const;
  // Schedules the domain's next primary failure, unless it falls beyond the horizon.
  void schedule_next(const Group& g, LpContext& ctx) const;
  // Reports a failure of (component, index) to the job and, maybe, schedules its repeat.
  void report(const Group& g, Component component, std::uint64_t index, bool repeat, LpContext& ctx) const;

  std::vector<Group> groups_;
  LpId job_lp_;
  SimTime horizon_;
  double repeat_probability_;
  double repeat_window_s_;
};

}  // namespace warpsim::reliability
