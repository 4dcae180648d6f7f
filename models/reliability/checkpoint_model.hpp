// Goodput of a long training run under failures, checkpoints and restarts.
// Failures arrive as a Poisson process at the system rate (sum over components of count / MTBF) and can
// strike during work, checkpoints and restarts alike. Work is checkpointed every `interval_s` of progress at
// a cost of `checkpoint_s`; a failure loses the work since the last completed checkpoint and costs a restart
// of `restart_s` (replace the failed part, relaunch, reload the checkpoint). Two ways to the answer:
//  - analytic: Daly's expected time per segment, M e^{R/M} (e^{(tau+C)/M} - 1) (Daly, FGCS 2006), and its
//    minimum over tau found numerically (Young's sqrt(2 C M) is its first-order approximation);
//  - Monte-Carlo: the run replayed with failure times drawn from the counter-based RNG keyed by (seed,
//    trial), so the estimate is the same in every process and sync mode.
#pragma once

#include <cstdint>

namespace warpsim::reliability {

struct CheckpointParams {
  double mtbf_s = 0;        // system mean time between failures
  double checkpoint_s = 0;  // C: time one checkpoint stalls training
  double restart_s = 0;     // R: failure to resumed training, reload included
};

// What a run of `work_s` seconds of failure-free training costs in wall time.
struct RunOutcome {
  double wall_s = 0;
  double failures = 0;
  double checkpoint_s = 0;  // time in completed checkpoints
  double restart_s = 0;     // time in restarts (interrupted restarts included)
  double lost_work_s = 0;   // work and checkpoint time thrown away by failures
  double goodput(double work_s) const { return wall_s > 0 ? work_s / wall_s : 0; }
};

// Expected wall time of one segment (interval_s of work plus its checkpoint).
double expected_segment_seconds(const CheckpointParams& p, double interval_s);
// Expected outcome of a run (interval_s = 0: never checkpointed, one segment of all the work).
RunOutcome expected_run(const CheckpointParams& p, double interval_s, double work_s);
// The interval minimizing expected wall time per unit of work (golden-section search on log interval).
double optimal_interval_seconds(const CheckpointParams& p);
// Young (1974): sqrt(2 C M).
double young_interval_seconds(const CheckpointParams& p);

// Mean outcome of `trials` replays of the run with failure times from the counter-based RNG.
RunOutcome monte_carlo_run(const CheckpointParams& p, double interval_s, double work_s, std::uint64_t seed,
                           std::uint32_t trials);

}  // namespace warpsim::reliability
