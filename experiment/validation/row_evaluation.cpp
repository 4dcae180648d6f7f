// Validation-row evaluation (see row_evaluation.hpp).
#include "experiment/validation/row_evaluation.hpp"

#include <mpi.h>

#include <cstdio>
#include <filesystem>
#include <sstream>

#include "experiment/spec/job_spec.hpp"
#include "experiment/training_run.hpp"
#include "experiment/training_setup.hpp"
#include "experiment/validation/row_variants.hpp"
#include "models/workload/step_estimate.hpp"

namespace warpsim::experiment::validation {

namespace {

struct Simulated {
  double step_seconds = 0;
  std::uint64_t events = 0;
  double wall_seconds = 0;
};

double number(const io::KeyValueReport& report, const std::string& key) {
  for (const auto& row : report.rows()) {
    if (row.key == key && row.number) return *row.number;
  }
  throw std::runtime_error("validation: the run's report has no '" + key + "'");
}

// One simulation of `exp` the way `warpsim run SPEC --sync sequential` does it, in this process.
Simulated simulate(const spec::ExperimentSpec& exp, const std::string& path, const std::string& what,
                   const RowOptions& options, RowResult& result) {
  if (options.on_simulation) options.on_simulation(what);
  RunRequest request;
  request.spec_path = path;
  request.engine.sync = "sequential";
  request.engine.progress_seconds = 0;
  request.given.sync = "sequential";
  const RunOutcome outcome = run_training(exp, request, MPI_COMM_SELF);
  Simulated s{number(outcome.report, "step seconds"),
              static_cast<std::uint64_t>(number(outcome.report, "events committed")),
              number(outcome.report, "wall seconds")};
  ++result.simulations;
  result.events += s.events;
  result.wall_seconds += s.wall_seconds;
  return s;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// The variants of the data-parallel term: one micro-batch per pipeline under plain 1F1B (interleaving
// needs a multiple of PP micro-batches; the term is a difference of two runs with the same schedule).
spec::ExperimentSpec one_microbatch(spec::ExperimentSpec exp) {
  auto& p = *exp.mutable_job()->mutable_parallelism();
  p.set_pipeline_schedule(spec::JobParallelism::ONE_F_ONE_B);
  p.set_virtual_stages_per_rank(1);
  return with_microbatches(exp, 1);
}

}  // namespace

std::string describe_config(const spec::ExperimentSpec& row) {
  const spec::JobSpec& j = row.job();
  const auto& p = j.parallelism();
  std::ostringstream o;
  o << spec::world_size(j) << " " << j.gpu_type() << ", TP" << p.tensor_parallel() << " PP"
    << p.pipeline_parallel() << " DP" << p.data_parallel();
  if (p.context_parallel() > 1) o << " CP" << p.context_parallel();
  if (p.expert_parallel() > 1) o << " EP" << p.expert_parallel();
  if (p.pipeline_schedule() == spec::JobParallelism::INTERLEAVED_1F1B && p.virtual_stages_per_rank() > 1)
    o << " VP" << p.virtual_stages_per_rank();
  o << ", MBS" << j.training().micro_batch_sequences() << " GBS" << j.training().global_batch_sequences()
    << ", seq " << j.model().seq_length_tokens() << ", " << spec::JobModel::DType_Name(j.model().dtype());
  return o.str();
}

RowResult evaluate_row(const spec::ExperimentSpec& row, const std::string& path, const RowOptions& options) {
  const std::filesystem::path file(path);
  RowResult result;
  result.set = file.parent_path().filename().string();
  result.row = file.stem().string();
  result.name = row.name();
  result.config = describe_config(row);
  result.source = row.validation().source();
  result.reference = row.validation().reference();

  const spec::ValidationReduction& red =
      options.full ? spec::ValidationReduction{} : row.validation().reduction();
  const std::uint64_t m = spec::microbatches_per_step(row.job());
  const spec::ExperimentSpec base = red.dp_replica() ? dp_replica(row) : row;
  const std::string base_what = red.dp_replica() ? "dp replica" : "whole job";
  std::ostringstream how;
  double step = 0;
  if (red.microbatch_points_size() == 2) {
    const std::uint64_t lo = red.microbatch_points(0), hi = red.microbatch_points(1);
    const double t_lo = simulate(with_microbatches(base, lo), path,
                                 base_what + ", " + std::to_string(lo) + " micro-batches", options, result)
                            .step_seconds;
    const double t_hi = simulate(with_microbatches(base, hi), path,
                                 base_what + ", " + std::to_string(hi) + " micro-batches", options, result)
                            .step_seconds;
    const double slope = (t_hi - t_lo) / static_cast<double>(hi - lo);
    step = t_hi + slope * static_cast<double>(m - hi);
    how << "T(m) = a + b*m from " << base_what << " m = " << lo << " (" << fixed(t_lo, 6) << " s), " << hi
        << " (" << fixed(t_hi, 6) << " s) -> m = " << m << ": " << fixed(step, 6) << " s";
  } else {
    step = simulate(base, path, base_what, options, result).step_seconds;
    if (red.dp_replica()) how << "dp replica " << fixed(step, 6) << " s";
  }
  if (red.dp_replica()) {
    const double full1 =
        simulate(one_microbatch(row), path, "whole job, 1 micro-batch, 1F1B", options, result).step_seconds;
    const double rep1 =
        simulate(one_microbatch(base), path, "dp replica, 1 micro-batch, 1F1B", options, result).step_seconds;
    step += full1 - rep1;
    how << " + DP term " << fixed(full1, 6) << " - " << fixed(rep1, 6) << " = " << fixed(full1 - rep1, 6)
        << " s";
  }
  result.reduction = how.str().empty() ? "none" : how.str();
  result.step_seconds = step;

  // FLOPs of the whole job's step, counted as the source counts them.
  // (The estimate only: the whole job's program is not built, which for the largest rows is costly.)
  const auto job = build_job(row);
  const workload::StepEstimate est = workload::estimate_step(job);
  const std::string& count = row.validation().flop_count();
  const double flops = count == "model"                      ? est.model_flops
                       : count == "model_unmasked_attention" ? est.model_flops_unmasked
                                                             : est.hardware_flops;
  result.prediction = flops / step / static_cast<double>(job->world_size()) / 1e12;
  return result;
}

}  // namespace warpsim::experiment::validation
