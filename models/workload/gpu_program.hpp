// The op stream of one GPU, generated lazily: op(i) is a pure function of (job, rank, i), computed
// arithmetically from the schedule position, so no trace is ever materialized. A GpuProgram is a few words;
// the per-stage tables it reads (slot offsets, step-end ops) are shared in the Job.
//
// Per step, a GPU of pipeline stage s runs the 2*m*v slots of its schedule (pipeline_schedule.hpp); a
// forward slot is [recv activations] [embedding] layers... [output head] [send activations], a backward slot
// the mirror image. Then come the data-parallel gradient collectives (bucketed), the optimizer step,
// ZeRO-1/2 parameter all-gathers and, every checkpoint_interval_steps, the checkpoint write.
//
// Semantics the executor must honour: ops run in index order; kSend is asynchronous (does not block the
// GPU); kRecv blocks until the send with the same (peer, tag) arrived; collectives block until every group
// member reached the collective with the same position (members issue their collectives in the same order).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "models/workload/job.hpp"
#include "models/workload/ops.hpp"

namespace warpsim::workload {

class GpuProgram {
 public:
  GpuProgram(std::shared_ptr<const Job> job, std::uint32_t rank, std::uint32_t steps = 1);

  std::uint32_t rank() const { return rank_; }
  std::uint32_t stage() const { return stage_; }
  std::uint64_t size() const { return step_start(steps_); }
  Op op(std::uint64_t i) const;

  // Ops of one training step, checkpoint excluded.
  std::uint64_t ops_per_step() const { return slot_ops_ + job_->step_end_ops(stage_).size(); }
  // Position of op i: its step and, for schedule ops, its slot index (slots_per_stage() for step-end ops).
  struct Position {
    std::uint32_t step = 0;
    std::uint64_t slot = 0;
    std::uint64_t in_slot = 0;
  };
  Position position(std::uint64_t i) const;
  const Job& job() const { return *job_; }

 private:
  std::uint64_t step_start(std::uint32_t step) const;
  bool checkpoint_after(std::uint32_t step) const;
  Op slot_op(std::uint32_t step, std::uint64_t k, std::uint64_t pos) const;
  Op layer_op(const LayerOp& t) const;
  Op p2p(bool send, std::uint32_t step, const ScheduleSlot& s) const;
  Op pp_gather(bool forward) const;
  void routed(Op& o) const;  // scales a routed-expert compute op by this GPU's routed share
 public:
  // The routing key of a routed op of this GPU (moe_routing.hpp): its layer, step, micro-batch and expert
  // group.
  RouteKey route_key(const Op& o) const;

 private:  // scatter/gather: TP all-gather of a received activation slice
  std::shared_ptr<const Job> job_;
  std::uint32_t rank_;
  std::uint32_t stage_;
  std::uint32_t steps_;
  std::uint64_t slot_ops_ = 0;
};

}  // namespace warpsim::workload
