// Job timeline LP of the resilience model (resilience_model.hpp): the training run as a state machine
// WORKING -> (every K steps) CHECKPOINTING -> WORKING ..., and on any failure RESTARTING -> WORKING, or,
// with a spare pool, RESTARTING -> WAITING (more nodes in repair than spares) -> WORKING when one is back.
// Steps take T (the simulated step without checkpoint stalls), a checkpoint C, a restart R. A failure
// throws away the work (and any partial checkpoint) since the last completed checkpoint or restart and
// starts a restart; failures during checkpoints and restarts count too (Daly's assumptions). Each failure
// bumps an epoch: the timeline's own pending events carry the epoch they were scheduled in, and one with a
// stale epoch is ignored (no state change, so its reverse is nothing).
// Reverse computation: forward saves the fields it overwrites in the event's payload and reverse restores
// them and subtracts the counters' increments (integer picoseconds, exact). Commit records the progress
// (a row at each change of phase, two per failure) and the failure table, which only committed events reach.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/slotted_lp_type.hpp"
#include "models/reliability/resilience_events.hpp"
#include "models/reliability/resilience_params.hpp"

namespace warpsim::reliability {

struct JobTimelineState {
  std::uint32_t epoch;
  Phase phase;
  std::uint32_t steps_since_checkpoint;  // steps of the current segment (not yet checkpointed)
  std::uint64_t saved_steps;             // steps safe in the last completed checkpoint
  std::uint64_t steps_run;               // step completions, lost ones included
  SimTime segment_start;                 // when the current segment's work began
  SimTime phase_start;                   // when the current phase began
  SimTime last_checkpoint_end;           // when the last checkpoint completed (0: none yet)
  std::uint64_t failures;
  std::uint64_t failures_in_phase[kPhases];  // by the phase they struck (Phase order)
  std::uint64_t repeats;                     // correlated repeats among the failures
  SimTime lost_ps;                           // work and partial checkpoints thrown away
  SimTime restart_ps;                        // restarts, interrupted ones included
  SimTime checkpoint_ps;                     // completed checkpoints
  SimTime wait_ps;                           // restarts done, waiting for nodes back from repair
  std::uint64_t waits;                       // restarts that had to wait
  std::uint32_t in_repair;                   // nodes in repair now (the spare pool)
};

// A committed change of phase (the progress table) and a committed failure (the failure table). From a row
// whose phase is kWorking to the next row, progress grows by one step every T; otherwise it stays. A
// failure gives two rows at its time: the progress it found (in the phase it struck) and what is left.
struct ProgressRow {
  SimTime time;
  std::uint64_t steps;        // progress: checkpointed steps + steps since
  std::uint64_t saved_steps;  // checkpointed steps
  Phase phase;                // the phase from this row on
};
struct FailureRow {
  SimTime time;  // when the component failed
  Component component;
  std::uint64_t index;  // within its class over the job's (or fabric's, storage's) components
  LpId domain;          // the failure domain's LP
  bool repeat;          // a correlated repeat
  Phase phase;          // what the job was doing
};

class JobTimelineLp final : public SlottedLpType<JobTimelineState> {
 public:
  // With `record`, commit keeps the progress rows and failure rows (rank-local; the LP's rank has them).
  JobTimelineLp(const ResilienceParams& params, bool record);
  std::string_view name() const override { return "job_timeline"; }
  void init(std::uint32_t slot, LpContext& ctx) override;
  void forward(std::uint32_t slot, LpContext& ctx) override;
  void reverse(std::uint32_t slot, LpContext& ctx) override;
  void commit(std::uint32_t slot, LpContext& ctx) override;
  std::uint64_t digest(std::uint32_t slot) const override;

  SimTime step_ps() const { return step_ps_; }
  SimTime checkpoint_ps() const { return checkpoint_ps_; }
  SimTime restart_ps() const { return restart_ps_; }
  std::uint32_t interval_steps() const { return interval_; }
  const std::vector<ProgressRow>& progress() const { return progress_; }
  const std::vector<FailureRow>& failures() const { return failures_; }

 private:
  void start_step(const JobTimelineState& s, LpContext& ctx) const;

  SimTime step_ps_, checkpoint_ps_, restart_ps_, repair_ps_;
  std::uint32_t interval_;
  std::uint32_t spares_;
  bool record_;
  std::vector<ProgressRow> progress_;
  std::vector<FailureRow> failures_;
};

}  // namespace warpsim::reliability
