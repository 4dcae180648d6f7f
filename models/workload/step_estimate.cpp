// Dependency-driven pipeline timing and the compute-only step estimate (see step_estimate.hpp).
#include "models/workload/step_estimate.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <stdexcept>
#include <tuple>

#include "models/workload/gpu_program.hpp"

namespace warpsim::workload {

double PipelineTiming::bubble_fraction() const {
  if (makespan <= 0 || busy_per_stage.empty()) return 0;
  const double busy =
      std::accumulate(busy_per_stage.begin(), busy_per_stage.end(), 0.0) / busy_per_stage.size();
  return 1.0 - busy / makespan;
}

PipelineTiming time_pipeline(const PipelineSchedule& sched,
                             const std::function<double(std::uint32_t, const ScheduleSlot&)>& duration) {
  const std::uint32_t p = sched.stages(), m = sched.microbatches(), v = sched.chunks();
  const std::uint64_t slots = sched.slots_per_stage();
  // finish[stage][pass: F, B, W][mb * v + chunk]; negative = not finished yet.
  std::vector<std::vector<double>> finish(3ull * p, std::vector<double>(std::uint64_t{m} * v, -1.0));
  const auto done = [&](const StageSlot& ss) -> double& {
    return finish[3ull * ss.stage + (ss.slot.forward  ? 0
                                     : ss.slot.weight ? 2
                                                      : 1)]
                 [std::uint64_t{ss.slot.microbatch} * v + ss.slot.chunk];
  };
  std::vector<std::uint64_t> next(p, 0);
  std::vector<double> free_at(p, 0.0);
  PipelineTiming t;
  t.busy_per_stage.assign(p, 0.0);
  std::uint64_t remaining = slots * p;
  while (remaining > 0) {
    bool progress = false;
    for (std::uint32_t s = 0; s < p; ++s) {
      while (next[s] < slots) {
        const ScheduleSlot slot = sched.slot(s, next[s]);
        double ready = 0;
        if (auto prod = sched.producer(s, slot)) {
          ready = done(*prod);
          if (ready < 0) break;
        }
        // A DualPipe pair starts when its backward's input is there too.
        if (slot.forward && slot.paired) {
          if (auto prod = sched.producer(s, sched.slot(s, next[s] + 1))) {
            const double b = done(*prod);
            if (b < 0) break;
            ready = std::max(ready, b);
          }
        }
        const double start = std::max(ready, free_at[s]);
        const double d = duration(s, slot);
        free_at[s] = start + d;
        t.busy_per_stage[s] += d;
        done({s, slot}) = free_at[s];
        ++next[s];
        --remaining;
        progress = true;
      }
    }
    if (!progress) throw std::logic_error("time_pipeline: schedule deadlocks");
  }
  t.makespan = *std::max_element(free_at.begin(), free_at.end());
  return t;
}

double StepEstimate::tflops_per_gpu() const {
  return step_seconds > 0 ? hardware_flops / step_seconds / world / 1e12 : 0;
}
double StepEstimate::model_tflops_per_gpu() const {
  return step_seconds > 0 ? model_flops / step_seconds / world / 1e12 : 0;
}
double StepEstimate::mfu() const {
  return peak_flops > 0 ? model_tflops_per_gpu() * 1e12 / peak_flops : 0;
}
double StepEstimate::hfu() const {
  return peak_flops > 0 ? tflops_per_gpu() * 1e12 / peak_flops : 0;
}

StepEstimate estimate_step(const std::shared_ptr<const Job>& job) {
  const auto& sched = job->schedule();
  const std::uint32_t p = sched.stages();
  StepEstimate est;
  est.world = job->world_size();
  est.peak_flops = job->gpu().peak_flops(job->shape().dtype);
  est.model_flops = analytic_step_flops(job->shape(), job->params().training.global_batch_sequences);
  est.model_flops_unmasked =
      analytic_step_flops(job->shape(), job->params().training.global_batch_sequences, /*unmasked=*/true);

  std::vector<std::vector<const ComputeModel*>> stage_models;
  for (std::uint32_t s = 0; s < p; ++s) stage_models.push_back(job->stage_computes(s));
  const auto op_seconds = [&](std::uint32_t s, const Op& o) {
    double t = 0;
    for (const ComputeModel* m : stage_models[s]) t = std::max(t, m->seconds(o));
    return t;
  };
  // Slot cost depends only on (stage, pass, first/last virtual stage); cache it.
  std::map<std::tuple<std::uint32_t, bool, bool, bool, bool>, std::pair<double, double>> cache;  // s, flops
  std::vector<GpuProgram> programs;
  for (std::uint32_t s = 0; s < p; ++s) programs.emplace_back(job, s * job->pipeline_stride(), 1);
  const auto slot_cost = [&](std::uint32_t s, const ScheduleSlot& slot) -> std::pair<double, double> {
    const auto key = std::tuple{s, slot.forward, slot.weight, sched.first_virtual(s, slot.chunk),
                                sched.last_virtual(s, slot.chunk)};
    if (auto it = cache.find(key); it != cache.end()) return it->second;
    // Find this slot's index on the stage to read its ops from the program.
    std::uint64_t k = 0;
    while (!(sched.slot(s, k) == slot)) ++k;
    const std::uint64_t begin = job->slot_offset(s, k), end = job->slot_offset(s, k + 1);
    // A stage on several GPU types (node groups) runs each op at its slowest GPU's time.
    double seconds = 0, flops = 0;
    for (std::uint64_t i = begin; i < end; ++i) {
      const Op o = programs[s].op(i);
      if (o.kind != OpKind::kCompute) continue;
      seconds += op_seconds(s, o);
      flops += o.flops;
    }
    return cache[key] = {seconds, flops};
  };

  const PipelineTiming t = time_pipeline(
      sched, [&](std::uint32_t s, const ScheduleSlot& slot) { return slot_cost(s, slot).first; });
  est.pipeline_seconds = t.makespan;
  est.bubble_fraction = t.bubble_fraction();

  // Hardware FLOPs: every stage runs its m*v forward and backward (and W) slots; all TP/DP/CP ranks of a
  // stage alike.
  const double replicas = static_cast<double>(job->world_size()) / p;
  for (std::uint32_t s = 0; s < p; ++s) {
    for (std::uint64_t k = 0; k < sched.slots_per_stage(); ++k) {
      est.hardware_flops += slot_cost(s, sched.slot(s, k)).second * replicas;
    }
    const GpuProgram& prog = programs[s];
    for (std::uint64_t i = job->slot_offset(s, sched.slots_per_stage()); i < prog.size(); ++i) {
      const Op o = prog.op(i);
      if (o.kind != OpKind::kCompute) continue;
      est.optimizer_seconds = std::max(est.optimizer_seconds, op_seconds(s, o));
    }
  }
  est.step_seconds = est.pipeline_seconds + est.optimizer_seconds;
  return est;
}

}  // namespace warpsim::workload
