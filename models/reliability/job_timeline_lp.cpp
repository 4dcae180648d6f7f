// Job timeline LP of the resilience model (see job_timeline_lp.hpp).
#include "models/reliability/job_timeline_lp.hpp"

#include <stdexcept>

#include "engine/hash.hpp"

namespace warpsim::reliability {

JobTimelineLp::JobTimelineLp(const ResilienceParams& params, bool record)
    : step_ps_(to_ps(params.step_s)),
      checkpoint_ps_(to_ps(params.checkpoint_s)),
      restart_ps_(to_ps(params.restart_s)),
      repair_ps_(to_ps(params.repair_s)),
      interval_(params.interval_steps),
      spares_(params.spare_nodes),
      record_(record) {
  if (step_ps_ == 0) throw std::invalid_argument("job timeline: the step time must be > 0");
  if (interval_ == 0) throw std::invalid_argument("job timeline: the checkpoint interval must be > 0 steps");
}

void JobTimelineLp::start_step(const JobTimelineState& s, LpContext& ctx) const {
  ResiliencePayload p;
  p.epoch = s.epoch;
  ctx.send(ctx.self(), step_ps_, kStepDone, p);
}

void JobTimelineLp::init(std::uint32_t slot, LpContext& ctx) {
  start_step(state(slot), ctx);  // the state starts WORKING at time 0, epoch 0
}

void JobTimelineLp::forward(std::uint32_t slot, LpContext& ctx) {
  JobTimelineState& s = mutable_state(slot);
  auto& p = ctx.payload<ResiliencePayload>();
  const SimTime now = ctx.now();
  // Failures and repairs are never stale; the timeline's own step, checkpoint and restart events are.
  if (ctx.kind() != kFailure && ctx.kind() != kRepairDone && p.epoch != s.epoch) {
    p.applied = 0;  // scheduled before a failure that has since struck: ignored
    return;
  }
  p.applied = 1;
  p.old_phase = static_cast<std::uint8_t>(s.phase);
  p.old_steps_since_checkpoint = s.steps_since_checkpoint;
  p.old_phase_start = s.phase_start;
  p.old_segment_start = s.segment_start;
  p.old_last_checkpoint_end = s.last_checkpoint_end;
  switch (ctx.kind()) {
    case kStepDone: {
      ++s.steps_run;
      if (++s.steps_since_checkpoint == interval_) {
        s.phase = Phase::kCheckpointing;
        s.phase_start = now;
        ResiliencePayload next;
        next.epoch = s.epoch;
        ctx.send(ctx.self(), checkpoint_ps_, kCheckpointDone, next);
      } else {
        start_step(s, ctx);
      }
      break;
    }
    case kCheckpointDone:
      s.saved_steps += s.steps_since_checkpoint;
      s.steps_since_checkpoint = 0;
      s.checkpoint_ps += now - s.phase_start;
      s.phase = Phase::kWorking;
      s.phase_start = now;
      s.segment_start = now;
      s.last_checkpoint_end = now;
      start_step(s, ctx);
      break;
    case kRestartDone:
      s.restart_ps += now - s.phase_start;
      s.phase_start = now;
      if (repair_ps_ > 0 && s.in_repair > spares_) {
        s.phase = Phase::kWaiting;  // a kRepairDone resumes
        ++s.waits;
        break;
      }
      s.phase = Phase::kWorking;
      s.segment_start = now;
      start_step(s, ctx);
      break;
    case kRepairDone:
      --s.in_repair;
      if (s.phase == Phase::kWaiting && s.in_repair <= spares_) {
        s.wait_ps += now - s.phase_start;
        s.phase = Phase::kWorking;
        s.phase_start = now;
        s.segment_start = now;
        start_step(s, ctx);
      }
      break;
    case kFailure: {
      ++s.failures;
      ++s.failures_in_phase[static_cast<std::size_t>(s.phase)];
      s.repeats += p.repeat;
      ++s.epoch;
      if (repair_ps_ > 0 && takes_node(p.component)) {
        ++s.in_repair;
        ResiliencePayload back;  // no epoch: a repair is never stale
        ctx.send(ctx.self(), repair_ps_, kRepairDone, back);
      }
      // A job already down and waiting for nodes loses nothing more and keeps waiting.
      if (s.phase == Phase::kWaiting) break;
      // Everything since the segment began is lost (work and any partial checkpoint); a restart that is
      // struck counts as restart time and starts over.
      if (s.phase == Phase::kRestarting) {
        s.restart_ps += now - s.phase_start;
      } else {
        s.lost_ps += now - s.segment_start;
      }
      s.steps_since_checkpoint = 0;
      s.phase = Phase::kRestarting;
      s.phase_start = now;
      ResiliencePayload next;
      next.epoch = s.epoch;
      ctx.send(ctx.self(), restart_ps_, kRestartDone, next);
      break;
    }
    default:
      throw std::logic_error("job timeline: unknown event kind " + std::to_string(ctx.kind()));
  }
  p.progress_after = s.saved_steps + s.steps_since_checkpoint;
  p.saved_after = s.saved_steps;
  p.phase_after = static_cast<std::uint8_t>(s.phase);
}

void JobTimelineLp::reverse(std::uint32_t slot, LpContext& ctx) {
  JobTimelineState& s = mutable_state(slot);
  const auto& p = ctx.payload<ResiliencePayload>();
  if (p.applied == 0) return;
  const SimTime now = ctx.now();
  const auto old_phase = static_cast<Phase>(p.old_phase);
  switch (ctx.kind()) {
    case kStepDone:
      --s.steps_run;
      break;
    case kCheckpointDone:
      s.saved_steps -= p.old_steps_since_checkpoint;
      s.checkpoint_ps -= now - p.old_phase_start;
      break;
    case kRestartDone:
      s.restart_ps -= now - p.old_phase_start;
      if (s.phase == Phase::kWaiting) --s.waits;
      break;
    case kRepairDone:
      ++s.in_repair;
      if (old_phase == Phase::kWaiting && s.phase == Phase::kWorking) s.wait_ps -= now - p.old_phase_start;
      break;
    case kFailure:
      if (repair_ps_ > 0 && takes_node(p.component)) --s.in_repair;
      if (old_phase == Phase::kRestarting) {
        s.restart_ps -= now - p.old_phase_start;
      } else if (old_phase != Phase::kWaiting) {
        s.lost_ps -= now - p.old_segment_start;
      }
      --s.failures;
      --s.failures_in_phase[static_cast<std::size_t>(old_phase)];
      s.repeats -= p.repeat;
      --s.epoch;
      break;
    default:
      break;
  }
  s.phase = old_phase;
  s.steps_since_checkpoint = p.old_steps_since_checkpoint;
  s.phase_start = p.old_phase_start;
  s.segment_start = p.old_segment_start;
  s.last_checkpoint_end = p.old_last_checkpoint_end;
}

void JobTimelineLp::commit(std::uint32_t, LpContext& ctx) {
  const auto& p = ctx.payload<ResiliencePayload>();
  if (!record_ || p.applied == 0) return;
  const SimTime now = ctx.now();
  // Progress rows only where the phase changes: while working, progress grows by one step every T, so the
  // rows in between would be implied (and a long horizon of short steps would hold billions of them).
  if (progress_.empty()) progress_.push_back({0, 0, 0, Phase::kWorking});
  const auto phase = static_cast<Phase>(p.phase_after);
  if (ctx.kind() == kFailure) {
    failures_.push_back({p.failed_at, static_cast<Component>(p.component), p.index, p.domain, p.repeat != 0,
                         static_cast<Phase>(p.old_phase)});
    // The progress the failure found (the steps done so far in the segment), then what is left of it.
    progress_.push_back(
        {now, p.saved_after + p.old_steps_since_checkpoint, p.saved_after, static_cast<Phase>(p.old_phase)});
    progress_.push_back({now, p.progress_after, p.saved_after, phase});
    return;
  }
  if (phase != static_cast<Phase>(p.old_phase))
    progress_.push_back({now, p.progress_after, p.saved_after, phase});
}

std::uint64_t JobTimelineLp::digest(std::uint32_t slot) const {
  const JobTimelineState& s = state(slot);
  std::uint64_t h = splitmix64_finalize(id_of(slot));
  for (std::uint64_t v :
       {std::uint64_t{s.epoch}, std::uint64_t(s.phase), std::uint64_t{s.steps_since_checkpoint},
        s.saved_steps, s.steps_run, s.segment_start, s.phase_start, s.last_checkpoint_end, s.failures,
        s.repeats, s.lost_ps, s.restart_ps, s.checkpoint_ps, s.wait_ps, s.waits, std::uint64_t{s.in_repair}})
    h = splitmix64_finalize(h ^ v);
  return h;
}

}  // namespace warpsim::reliability
