// One simulation of a training program on the packet-level cluster model, and the job GPUs' results
// gathered over the ranks of the communicator (the MPI reductions of a run's model metrics live here).
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>

#include "engine/kernel/engine.hpp"
#include "engine/kernel/lp_map.hpp"
#include "engine/series_recorder.hpp"
#include "experiment/run_economics.hpp"
#include "models/cluster/cluster_params.hpp"
#include "models/energy/power_model.hpp"
#include "models/training/training_program.hpp"
#include "models/workload/job.hpp"
#include "models/workload/step_estimate.hpp"

namespace warpsim::experiment {

// The job GPUs' figures of one simulation, identical on every rank (reduced over the communicator).
struct Simulated {
  RunResult run;
  std::uint64_t lps = 0;
  std::uint64_t max_finish_ps = 0, max_busy_ps = 0, min_busy_ps = ~0ull, sum_busy_ps = 0, sum_bytes_sent = 0;
  std::array<std::uint64_t, cluster::kWaitLabels> sum_blocked_ps{};  // per wait label, over the job's GPUs
  energy::ComponentTotals totals;  // per component kind, for the energy model (run_economics)
};

// What a simulation needs of a GPU program besides its ops: which GPUs run it (the others are left out of
// the figures) and how many ops each has (for the progress report).
struct ProgramExtent {
  std::function<bool(std::uint32_t)> runs;
  std::function<std::uint64_t(std::uint32_t)> size;
};

// Any GPU program (a training program, a trace replay). Collective over `comm`; throws std::runtime_error
// when one of its GPUs did not finish its program.
Simulated simulate_program(const cluster::ClusterParams& params,
                           std::shared_ptr<const cluster::GpuProgram> program, const ProgramExtent& extent,
                           EngineConfig config, const LpMap& map, MPI_Comm comm,
                           SeriesRecorder* series = nullptr, const economics::ProgramWrap& wrap = {});

// A training program, whose GPUs are the job's [0, world). Collective over `comm`. Throws std::runtime_error
// when a job GPU did not finish its program. A run that stopped at a checkpoint returns only `run` (the
// resumed run reports).
Simulated simulate(const cluster::ClusterParams& params,
                   std::shared_ptr<const training::TrainingProgram> program, EngineConfig config,
                   const LpMap& map, std::uint32_t world, MPI_Comm comm, SeriesRecorder* series = nullptr,
                   const economics::ProgramWrap& wrap = {});

// The compute-only schedule's makespan minus its busiest stage's compute time: how much of a step the
// pipeline's data dependencies cost with a free network.
double pipeline_dependency_seconds(const std::shared_ptr<const workload::Job>& job,
                                   const workload::StepEstimate& est);

}  // namespace warpsim::experiment
