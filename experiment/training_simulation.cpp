// One simulation of a training program and its gathered GPU figures (see training_simulation.hpp).
#include "experiment/training_simulation.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "models/cluster/cluster_model.hpp"

namespace warpsim::experiment {

Simulated simulate(const cluster::ClusterParams& params,
                   std::shared_ptr<const training::TrainingProgram> program, EngineConfig config,
                   const LpMap& map, std::uint32_t world, MPI_Comm comm, SeriesRecorder* series,
                   const economics::ProgramWrap& wrap) {
  const ProgramExtent extent{[world](std::uint32_t gpu) { return gpu < world; },
                             [program](std::uint32_t gpu) { return program->size(gpu); }};
  return simulate_program(params, program, extent, std::move(config), map, comm, series, wrap);
}

Simulated simulate_program(const cluster::ClusterParams& params,
                           std::shared_ptr<const cluster::GpuProgram> program, const ProgramExtent& extent,
                           EngineConfig config, const LpMap& map, MPI_Comm comm, SeriesRecorder* series,
                           const economics::ProgramWrap& wrap) {
  cluster::ClusterModel model(params, economics::wrapped(wrap, program));
  if (series != nullptr) model.record_series(*series);
  // Progress = GPU ops executed / ops in the programs of this rank's job GPUs: unlike simulated time it
  // needs no guess of the step time (the end time is only a cap).
  config.progress_fraction = [&model, &extent, total = 0.0]() mutable {
    const auto& gpus = model.gpus();
    double done = 0;
    const bool count_total = total == 0;
    for (std::uint32_t slot = 0; slot < gpus.size(); ++slot) {
      const auto& s = gpus.state(slot);
      const std::uint32_t gpu = model.topology().gpu_of(s.id);
      if (!extent.runs(gpu)) continue;
      done += static_cast<double>(s.streams[0].pc);
      if (count_total) total += static_cast<double>(extent.size(gpu));
    }
    return total > 0 ? done / total : 0.0;
  };
  Engine engine(model, map, config, comm);
  Simulated out;
  out.run = engine.run();
  out.lps = model.lp_count();
  // Stopped at a checkpoint (every rank alike): the GPUs are mid-program; the resumed run reports.
  if (out.run.stopped_at_checkpoint) return out;
  out.totals = economics::reduce_totals(model, comm);
  std::uint64_t maxes[2] = {0, 0};    // finish, busy
  std::uint64_t sums[3] = {0, 0, 0};  // busy, not done, bytes sent
  std::uint64_t mins[1] = {~0ull};    // busy
  const auto& gpus = model.gpus();
  for (std::uint32_t slot = 0; slot < gpus.size(); ++slot) {
    const auto& s = gpus.state(slot);
    if (!extent.runs(model.topology().gpu_of(s.id))) continue;  // s.id is the LP id, not the GPU index
    maxes[0] = std::max<std::uint64_t>(maxes[0], s.finish_ps);
    maxes[1] = std::max<std::uint64_t>(maxes[1], s.busy_ps);
    mins[0] = std::min<std::uint64_t>(mins[0], s.busy_ps);
    sums[0] += s.busy_ps;
    sums[1] += s.done ? 0 : 1;
    sums[2] += s.bytes_sent;
    const auto& clock = gpus.wait_clock(slot);
    for (std::size_t l = 0; l < clock.blocked_ps.size(); ++l) out.sum_blocked_ps[l] += clock.blocked_ps[l];
  }
  MPI_Allreduce(MPI_IN_PLACE, out.sum_blocked_ps.data(), static_cast<int>(out.sum_blocked_ps.size()),
                MPI_UINT64_T, MPI_SUM, comm);
  MPI_Allreduce(MPI_IN_PLACE, maxes, 2, MPI_UINT64_T, MPI_MAX, comm);
  MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_UINT64_T, MPI_SUM, comm);
  MPI_Allreduce(MPI_IN_PLACE, mins, 1, MPI_UINT64_T, MPI_MIN, comm);
  if (sums[1] != 0) {
    throw std::runtime_error("the workload did not complete: " + std::to_string(sums[1]) +
                             " GPUs still running at the end time (raise simulation.end_time_s) or blocked");
  }
  out.max_finish_ps = maxes[0];
  out.max_busy_ps = maxes[1];
  out.min_busy_ps = mins[0];
  out.sum_busy_ps = sums[0];
  out.sum_bytes_sent = sums[2];
  return out;
}

double pipeline_dependency_seconds(const std::shared_ptr<const workload::Job>& shared,
                                   const workload::StepEstimate& est) {
  const workload::Job& job = *shared;
  const std::uint64_t slots = job.schedule().slots_per_stage();
  double busiest = 0;
  for (std::uint32_t stage = 0; stage < job.degrees().pp; ++stage) {
    const workload::GpuProgram prog(shared, stage * job.pipeline_stride(), 1);
    const auto models = job.stage_computes(stage);  // several GPU types: the stage's slowest, as the estimate
    double busy = 0;
    for (std::uint64_t i = 0; i < prog.size(); ++i) {
      const workload::Op op = prog.op(i);
      if (op.kind != workload::OpKind::kCompute || prog.position(i).slot >= slots) continue;
      double t = 0;
      for (const workload::ComputeModel* m : models) t = std::max(t, m->seconds(op));
      busy += op.fixed_duration_ps != 0 ? static_cast<double>(op.fixed_duration_ps) * 1e-12 : t;
    }
    busiest = std::max(busiest, busy);
  }
  return std::max(0.0, est.pipeline_seconds - busiest);
}

}  // namespace warpsim::experiment
