// The training run's timeline under failures as a discrete-event model on warpsim's own engine, so that
// goodput, lost work and restart time are measured from a simulation (any sync mode and rank count, the
// same results) rather than only computed (checkpoint_model.hpp keeps the analytic and Monte-Carlo
// answers to compare with). LP 0 is the job timeline (job_timeline_lp.hpp); LPs 1.. are the failure
// domains (failure_domain_lp.hpp), group after group as ResilienceParams lists them. Events: one per step
// and per checkpoint of the job, and a few per failure. Beyond Daly's assumptions: correlated repeats of a
// failure and a pool of spare nodes that a restart may have to wait for. Model: docs/energy-cost.md,
// "Failures simulated inside the run".
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/model.hpp"
#include "models/reliability/failure_domain_lp.hpp"
#include "models/reliability/job_timeline_lp.hpp"
#include "models/reliability/resilience_params.hpp"

namespace warpsim::reliability {

class ResilienceModel final : public Model {
 public:
  static constexpr LpId kJobLp = 0;

  // `record`: the job timeline keeps its committed progress and failure rows (for a results file).
  explicit ResilienceModel(const ResilienceParams& params, bool record = false);
  std::uint64_t lp_count() const override { return 1 + params_.domain_count(); }
  std::size_t type_count() const override { return 2; }
  LpType& type(std::size_t index) override;
  std::size_t type_of(LpId lp) const override { return lp == kJobLp ? 0 : 1; }
  std::size_t payload_bytes() const override { return sizeof(ResiliencePayload); }
  SimTime lookahead() const override { return kDetectionDelay; }

  const ResilienceParams& params() const { return params_; }
  const JobTimelineLp& timeline() const { return timeline_; }
  const FailureDomainLp& domains() const { return domains_; }

 private:
  ResilienceParams params_;
  JobTimelineLp timeline_;
  FailureDomainLp domains_;
};

// What a finished run measured (the job timeline's state at the horizon). Times in engine picoseconds, so
// that horizon = useful + checkpoint + restart + lost + wait + in flight holds exactly.
struct ResilienceOutcome {
  SimTime horizon_ps = 0;
  std::uint64_t failures = 0;
  std::uint64_t repeats = 0;                      // correlated repeats among them
  std::uint64_t failures_in_phase[kPhases] = {};  // struck while working, checkpointing, restarting, waiting
  std::uint64_t steps_run = 0;                    // step completions, lost ones included
  std::uint64_t saved_steps = 0;                  // steps in the last completed checkpoint
  std::uint64_t progress_steps = 0;               // saved + steps since, at the horizon
  SimTime useful_ps = 0;                          // saved steps x T
  SimTime lost_ps = 0, restart_ps = 0, checkpoint_ps = 0;
  SimTime wait_ps = 0;       // waiting for nodes back from repair (the spare pool)
  std::uint64_t waits = 0;   // restarts that had to wait
  SimTime in_flight_ps = 0;  // at the horizon: the unfinished segment's work and checkpoint, restart or wait
  SimTime last_checkpoint_end_ps = 0;
  // Useful work per wall second up to the last completed checkpoint (a renewal point, so without the bias
  // of a half-finished segment at the horizon); 0 when no checkpoint completed. The ratio is reduced by its
  // gcd before the division, so a run without failures gives exactly K T / (K T + C).
  double goodput() const;
};
// From the timeline's state (on the rank that holds LP 0).
ResilienceOutcome outcome_of(const JobTimelineState& s, const JobTimelineLp& lp, SimTime horizon);

}  // namespace warpsim::reliability
