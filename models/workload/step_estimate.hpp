// Compute-only step-time estimate: the pipeline schedule timed by a dependency-driven loop in which every
// slot costs the compute time of its ops (ComputeModel) and communication is free. It gives the
// compute + pipeline-bubble part of a step; the cluster simulation adds the network on top.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "models/workload/job.hpp"
#include "models/workload/pipeline_schedule.hpp"

namespace warpsim::workload {

struct PipelineTiming {
  double makespan = 0;                 // first slot start to last slot end
  std::vector<double> busy_per_stage;  // sum of slot durations
  double bubble_fraction() const;      // mean idle share of the stages over the makespan
};

// Times `schedule` where slot (stage, s) takes duration(stage, s) and starts when its stage is free and its
// producer slot (PipelineSchedule::producer) has finished. Throws std::logic_error on a deadlock.
PipelineTiming time_pipeline(const PipelineSchedule& schedule,
                             const std::function<double(std::uint32_t, const ScheduleSlot&)>& duration);

struct StepEstimate {
  double step_seconds = 0;  // pipeline makespan + optimizer (communication excluded)
  double pipeline_seconds = 0;
  double optimizer_seconds = 0;  // slowest stage
  double bubble_fraction = 0;
  double hardware_flops = 0;        // all compute ops of all GPUs in one step, recomputation included
  double model_flops = 0;           // analytic 6*N*tokens + attention (no recomputation; causal: half)
  double model_flops_unmasked = 0;  // the same with every attention score counted (older formulas)
  double tflops_per_gpu() const;    // hardware FLOP/s per GPU, in TFLOP/s (Megatron's convention)
  double model_tflops_per_gpu() const;
  std::uint32_t world = 1;
  double peak_flops = 0;  // per GPU, model dtype
  double mfu() const;     // model FLOP/s / peak
  double hfu() const;     // hardware FLOP/s / peak
};

// Compute-only estimate of one step (uses one GPU per pipeline stage; all stages' data/tensor ranks are
// symmetric).
StepEstimate estimate_step(const std::shared_ptr<const Job>& job);

}  // namespace warpsim::workload
