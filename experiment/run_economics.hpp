// The economics of a simulated training run, for `warpsim run` when the experiment has `cost` and/or
// `reliability` sections: energy from the simulated components' busy time and bytes (models/energy), money
// and carbon per step, per token and per training run, goodput under failures with the optimal checkpoint
// interval (models/reliability), and the straggler GPUs the simulation runs with. Everything printed is a
// function of the committed simulation and the seed, so it is identical in every sync mode and rank count.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "experiment/spec/experiment.pb.h"
#include "io/key_value_report.hpp"
#include "models/cluster/cluster_model.hpp"
#include "models/cluster/gpu_program.hpp"
#include "models/energy/power_model.hpp"
#include "models/reliability/checkpoint_model.hpp"

namespace warpsim::experiment::economics {

// Checks the cost and reliability sections (std::invalid_argument naming the field, prefixed
// "experiment spec: "); nothing to check when both are absent. `simulated` = the checkpoint stall can be
// measured by simulation (otherwise reliability.checkpoint_seconds is required with failures, unless
// `stall_given`: the caller supplies it in RunFigures::checkpoint_seconds).
void validate(const spec::ExperimentSpec& exp, bool simulated = true, bool stall_given = false);

// Applied to every GPU program `warpsim run` simulates (the main run and its what-if runs alike): slows
// the reliability section's straggler GPUs. Empty when the spec has none.
using ProgramWrap =
    std::function<std::shared_ptr<const cluster::GpuProgram>(std::shared_ptr<const cluster::GpuProgram>)>;
ProgramWrap program_wrap(const spec::ExperimentSpec& exp, std::uint64_t seed, std::uint32_t world);
// `program` through `wrap` (itself when `wrap` is empty).
std::shared_ptr<const cluster::GpuProgram> wrapped(const ProgramWrap& wrap,
                                                   std::shared_ptr<const cluster::GpuProgram> program);

// The power model of the experiment: the GPU profile's defaults with the cost.power overrides.
energy::PowerParams power_params(const spec::ExperimentSpec& exp);

// Per-kind totals of a finished simulation summed over the ranks of `comm` (collective).
energy::ComponentTotals reduce_totals(const cluster::ClusterModel& model, MPI_Comm comm);

// Checkpoint writes in the simulated steps (they need storage targets and an interval <= the steps).
std::uint32_t checkpoints_simulated(const spec::ExperimentSpec& exp);
// Whether the checkpoint stall must be measured by a second simulation without checkpoint writes.
bool needs_checkpoint_measurement(const spec::ExperimentSpec& exp, std::uint32_t checkpoints_simulated);

struct RunFigures {
  double run_seconds = 0;  // simulated makespan of all steps
  std::uint32_t steps = 1;
  double tokens_per_step = 0;
  std::uint32_t world = 0;                                // the job's GPUs
  std::uint32_t checkpoints_simulated = 0;                // checkpoint writes in the simulated steps
  std::optional<double> run_seconds_without_checkpoints;  // the same simulation without them
  // The checkpoint stall when nothing simulated measures it (`warpsim cost`), and where it came from; the
  // spec's reliability.checkpoint_seconds still wins.
  std::optional<double> checkpoint_seconds;
  std::string checkpoint_seconds_source;
  energy::ComponentTotals totals;
  std::uint64_t seed = 0;
};

// The goodput model's inputs of a run with failures (nullopt without `reliability.failures`): the system
// MTBF over the cluster's components, C (spec, supplied or simulated, and which), R, the step without
// checkpoint stalls and the checkpoint interval. The resilience simulation (resilience_run.hpp) takes its
// T, C, R and K from here, so the analytic and the simulated goodput are of the same run.
struct GoodputInputs {
  reliability::CheckpointParams checkpoint;
  std::string checkpoint_source;
  double clean_step_s = 0;
  std::uint32_t interval_steps = 0;
  double interval_s() const { return interval_steps * clean_step_s; }
};
std::optional<GoodputInputs> goodput_inputs(const spec::ExperimentSpec& exp, const RunFigures& run);

// Appends the energy/cost/carbon/goodput keys (docs/energy-cost.md lists them).
void add_report(io::KeyValueReport& report, const spec::ExperimentSpec& exp, const RunFigures& run);

}  // namespace warpsim::experiment::economics
