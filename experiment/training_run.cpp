// `warpsim run` as a library call (see training_run.hpp).
#include "experiment/training_run.hpp"

#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/checkpoint_io.hpp"
#include "engine/hash.hpp"
#include "engine/kernel/engine.hpp"
#include "experiment/cluster_jobs_run.hpp"
#include "experiment/engine_report.hpp"
#include "experiment/memory_report.hpp"
#include "experiment/resilience_run.hpp"
#include "experiment/run_economics.hpp"
#include "experiment/run_forecast.hpp"
#include "experiment/spec/experiment_spec.hpp"
#include "experiment/trace_run.hpp"
#include "experiment/training_partition.hpp"
#include "experiment/training_setup.hpp"
#include "experiment/training_simulation.hpp"
#include "models/cluster/topology.hpp"

namespace warpsim::experiment {

namespace {

// `warpsim run --check`: the experiment's size, without simulating.
io::KeyValueReport check_report(const spec::ExperimentSpec& exp, const TrainingSetup& t,
                                const RunForecast& f) {
  std::uint64_t ops = 0;
  for (std::uint32_t g = 0; g < t.job->world_size(); g += t.job->pipeline_stride()) ops += t.program->size(g);
  io::KeyValueReport report;
  report.add("experiment", exp.name());
  report.add("gpus", static_cast<std::uint64_t>(t.job->world_size()));
  report.add("cluster gpus", std::uint64_t{t.params.nodes} * t.params.gpus_per_node);
  report.add("steps", static_cast<std::uint64_t>(t.steps));
  report.add("gpu ops per pipeline column", ops);
  report.add("estimate step seconds", t.estimate.step_seconds, 6);
  add_memory_report(report, *t.job);
  report.add("lps", f.lps);
  report.add(f.events_upper_bound ? "predicted events (upper bound, flow fidelity)" : "predicted events",
             f.events, 0);
  report.add("predicted peak rss bytes per rank", f.peak_bytes_per_rank, 0);
  report.add("predicted wall seconds", f.wall_seconds, 1);
  report.add("reference events per second", kReferenceEventsPerSecond, 0);
  report.add("spec", std::string("ok"));
  return report;
}

// Checkpoints name what they belong to: a resumed run must have the same spec and series interval.
void add_checkpoint_identity(const spec::ExperimentSpec& exp, RunOutput* output, EngineConfig& config) {
  std::string spec_text;
  google::protobuf::TextFormat::PrintToString(exp, &spec_text);
  Fnv1a spec_hash;
  spec_hash.update(spec_text.data(), spec_text.size());
  auto& id = config.checkpoint.identity;
  id.emplace_back("spec hash", hex_digest(spec_hash.value()));
  id.emplace_back("series interval ps", output ? std::to_string(output->interval()) : std::string("none"));
  if (output) {
    SeriesRecorder& recorder = output->recorder();
    config.checkpoint.save_extra = [&recorder](std::ostream& out) { recorder.save(out); };
    config.checkpoint.load_extra = [&recorder](std::istream& in) { recorder.load(in); };
  }
}

// What-if attribution: the step again with one class of communication removed (both ends), for each class
// the job has. Exposed time of a class = full step - step without it (picoseconds over all steps).
std::vector<std::pair<training::CommClass, double>> attribute_classes(const TrainingSetup& t,
                                                                      const Simulated& main,
                                                                      const EngineConfig& config,
                                                                      const LpMap& map, MPI_Comm comm,
                                                                      const economics::ProgramWrap& wrap) {
  std::vector<std::pair<training::CommClass, double>> attributed;
  const std::uint32_t world = t.job->world_size();
  for (unsigned c = 0; c < static_cast<unsigned>(training::CommClass::kCount); ++c) {
    const auto cls = static_cast<training::CommClass>(c);
    const auto ablated = t.program_without(training::bit(cls));
    bool present = false;
    for (std::uint32_t g = 0; g < world && !present; g += t.job->pipeline_stride()) {
      present = ablated->size(g) != t.program->size(g);
    }
    if (!present) continue;
    const Simulated a = simulate(t.params, ablated, config, map, world, comm, nullptr, wrap);
    double delta = static_cast<double>(main.max_finish_ps) - static_cast<double>(a.max_finish_ps);
    // Without pipeline messages the stages no longer wait for each other, so the step also loses the
    // schedule's own dependency wait (compute-only makespan - busiest stage): not communication. That wait
    // is the one-step estimate times the steps; over several steps a fast stage starts the next step's
    // forwards early and the real wait is smaller, so on a near-ideal network the difference can dip below
    // zero (-0.13 ms on tests/models/training/small_mixed_gpus.textproto): exposed time is never negative.
    if (cls == training::CommClass::kPipeline) {
      delta = std::max(0.0, delta - pipeline_dependency_seconds(t.job, t.estimate) * t.steps *
                                        static_cast<double>(kPicosPerSecond));
    }
    attributed.emplace_back(cls, delta);
  }
  return attributed;
}

}  // namespace

RunOutcome run_training(const RunRequest& request, MPI_Comm comm) {
  return run_training(spec::load_experiment_spec(request.spec_path), request, comm);
}

RunOutcome run_training(const spec::ExperimentSpec& exp, const RunRequest& request, MPI_Comm comm) {
  if (exp.job_source_case() == spec::ExperimentSpec::kChakraTrace) return run_trace(exp, request, comm);
  if (exp.jobs_size() > 0) return run_cluster_jobs(exp, request, comm);  // several jobs on one cluster
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  economics::validate(exp);
  const auto& sim = exp.simulation();
  const EngineSettings settings = resolve_engine_settings(request.engine, request.given, sim);
  const auto end = static_cast<SimTime>(sim.end_time_s() * static_cast<double>(kPicosPerSecond));
  const EngineConfig config = to_engine_config(settings.options, end, kPicosPerNano, ranks, settings.sources);
  const TrainingSetup t = build_training(exp);
  check_end_time_fits(t, sim.end_time_s());
  // With a memory budget: refused here if it cannot fit; else each rank's peak without speculation, from
  // which the engine takes the headroom it may speculate in.
  std::uint64_t memory_expected_bytes = 0;
  if (config.memory_budget_bytes != 0) {
    const std::uint64_t lps = cluster::make_topology(t.params)->lp_count();
    check_memory_budget(lps, ranks, config, settings.options.memory_budget);
    memory_expected_bytes = static_cast<std::uint64_t>(predicted_peak_bytes_per_rank(lps, ranks, 0));
  }
  // Before a long run, say so (on stderr, before any work). Only rank 0 reports, so only it builds the
  // forecast's traffic graph; the other ranks need nothing from it.
  RunOutcome outcome;
  if (rank == 0) {
    const RunForecast forecast = forecast_run(t, ranks, speculation_events(config, ranks));
    if (request.warn) request.warn(forecast.warnings);
    if (request.check_only) outcome.report = check_report(exp, t, forecast);
  }
  if (request.check_only) return outcome;

  const std::uint32_t world = t.job->world_size();
  const std::uint32_t steps = t.steps;
  const auto seed = static_cast<std::uint64_t>(settings.options.seed);
  const economics::ProgramWrap wrap = economics::program_wrap(exp, seed, world);
  const std::unique_ptr<LpMap> map =
      make_training_partition(settings.options.partition, request.partition_map, t.params, t.job,
                              t.params.storage_targets, ranks, settings.sources.partition);
  const auto output = RunOutput::prepare(
      request.output, exp, resolve_sample_interval(request.given.sample_interval_ns, sim),
      {std::string(to_string(config.sync)), settings.options.partition, settings.options.seed, ranks},
      t.estimate.step_seconds * steps, config.end_time, comm);
  // Checkpoints cover the main simulation only; the what-if simulations below run whole in the process
  // that finishes the run (docs/checkpoint.md).
  EngineConfig main_config = config;
  main_config.memory_expected_bytes = memory_expected_bytes;
  apply_checkpoint_options(request.checkpoint, "--checkpoint-at-ns", kPicosPerNano, main_config);
  if (main_config.checkpoint.writes() || !main_config.checkpoint.resume.empty()) {
    add_checkpoint_identity(exp, output.get(), main_config);
  }
  const Simulated main = simulate(t.params, t.program, main_config, *map, world, comm,
                                  output ? &output->recorder() : nullptr, wrap);
  const RunResult& r = main.run;
  if (r.stopped_at_checkpoint) {
    outcome.stopped_at_checkpoint = true;
    outcome.checkpoint_path = r.checkpoint_path;
    outcome.checkpoint_time = r.checkpoint_time;
    return outcome;
  }

  std::vector<std::pair<training::CommClass, double>> attributed;
  if (request.attribute) attributed = attribute_classes(t, main, config, *map, comm, wrap);
  // The checkpoint stall for the goodput model: the same steps again without their checkpoint writes.
  const std::uint32_t checkpoints = economics::checkpoints_simulated(exp);
  std::optional<double> without_checkpoints;
  if (economics::needs_checkpoint_measurement(exp, checkpoints)) {
    const auto plain = t.program_without(training::bit(training::CommClass::kCheckpoint));
    const Simulated p = simulate(t.params, plain, config, *map, world, comm, nullptr, wrap);
    without_checkpoints = static_cast<double>(p.max_finish_ps) / static_cast<double>(kPicosPerSecond);
  }
  const workload::Job& job = *t.job;
  const double ps = static_cast<double>(kPicosPerSecond);
  const auto& train = job.params().training;
  const double tokens = static_cast<double>(train.global_batch_sequences) * job.shape().seq;
  const economics::RunFigures figures{.run_seconds = static_cast<double>(main.max_finish_ps) / ps,
                                      .steps = steps,
                                      .tokens_per_step = tokens,
                                      .world = world,
                                      .checkpoints_simulated = checkpoints,
                                      .run_seconds_without_checkpoints = without_checkpoints,
                                      // a run measures the stall, `warpsim cost` estimates it
                                      .checkpoint_seconds = std::nullopt,
                                      .checkpoint_seconds_source = {},
                                      .totals = main.totals,
                                      .seed = seed};
  // Failures simulated inside the run: a second engine run, sequential on rank 0, with the step,
  // checkpoint stall and restart the goodput model uses.
  std::optional<ResilienceRun> resilience;
  std::optional<economics::GoodputInputs> goodput_in;
  if (exp.has_reliability() && exp.reliability().has_simulate_failures()) {
    goodput_in = economics::goodput_inputs(exp, figures);
    resilience = run_resilience_on_rank0(resilience_params(exp, *goodput_in, main.totals, world), config,
                                         comm, output != nullptr);
  }
  if (rank != 0) {
    if (output) output->write(nullptr, comm);
    return outcome;
  }

  const workload::StepEstimate& est = t.estimate;
  const double step_s = static_cast<double>(main.max_finish_ps) / ps / steps;
  const double compute_s = static_cast<double>(main.sum_busy_ps) / world / ps / steps;
  // The bubble a compute-only schedule has (the network can only lengthen it; the rest is attributed to
  // communication).
  const double bubble_s = est.bubble_fraction * est.pipeline_seconds;
  const double exposed_s = std::max(0.0, step_s - compute_s - bubble_s);

  io::KeyValueReport& report = outcome.report;
  report.add("model", std::string("training"));
  report.add("experiment", exp.name());
  report.add("job", job.params().name);
  report.add("cluster", exp.cluster().name());
  report.add("gpu", std::string(job.gpu().name));
  if (job.mixed_gpus()) {
    // Node groups of several GPU types: the job's GPUs per type, in rank order ("H100-SXM 8, A100-80GB 8").
    std::vector<std::pair<std::string, std::uint64_t>> runs;  // adjacent groups of one type merged
    for (const auto& r : job.params().rank_gpu_types) {
      if (!runs.empty() && runs.back().first == r.gpu_type) {
        runs.back().second += r.ranks;
      } else {
        runs.emplace_back(r.gpu_type, r.ranks);
      }
    }
    std::string types;
    for (const auto& [type, ranks] : runs)
      types += (types.empty() ? "" : ", ") + type + " " + std::to_string(ranks);
    report.add("gpu types", types);
  }
  report.add("gpus", static_cast<std::uint64_t>(world));
  report.add("cluster gpus", std::uint64_t{t.params.nodes} * t.params.gpus_per_node);
  report.add("steps", static_cast<std::uint64_t>(steps));
  report.add("microbatches per step", static_cast<std::uint64_t>(job.microbatches()));
  report.add("sync", std::string(to_string(config.sync)));
  report.add("step seconds", step_s, 6);
  report.add("estimate step seconds", est.step_seconds, 6);
  report.add("tokens per second", tokens / step_s, 0);
  report.add("tflops per gpu", est.hardware_flops / step_s / world / 1e12, 2);
  report.add("model tflops per gpu", est.model_flops / step_s / world / 1e12, 2);
  report.add("mfu", est.model_flops / step_s / world / est.peak_flops, 4);
  report.add("hfu", est.hardware_flops / step_s / world / est.peak_flops, 4);
  report.add("compute seconds", compute_s, 6);
  report.add("compute seconds min", static_cast<double>(main.min_busy_ps) / ps / steps, 6);
  report.add("compute seconds max", static_cast<double>(main.max_busy_ps) / ps / steps, 6);
  report.add("pipeline bubble seconds", bubble_s, 6);
  report.add("exposed communication seconds", exposed_s, 6);
  report.add("compute fraction", compute_s / step_s, 4);
  report.add("bubble fraction", bubble_s / step_s, 4);
  report.add("exposed communication fraction", exposed_s / step_s, 4);
  for (const auto& [cls, ps_delta] : attributed) {
    report.add(std::string("exposed ") + training::to_string(cls) +
                   (cls == training::CommClass::kCheckpoint || cls == training::CommClass::kDataLoader
                        ? " stall seconds"
                        : " communication seconds"),
               ps_delta / ps / steps, 6);
  }
  // Where each GPU's stream stood blocked, by what its Wait was for (mean per GPU): a profiler's view, one
  // simulation; pipeline waits include the bubble, and a data-loader read is waited for by the next Wait.
  for (unsigned c = 0; c < static_cast<unsigned>(training::CommClass::kCount); ++c) {
    const auto cls = static_cast<training::CommClass>(c);
    const std::uint64_t blocked = main.sum_blocked_ps[training::wait_label(cls)];
    if (blocked != 0)
      report.add(std::string("blocked on ") + training::to_string(cls) + " seconds",
                 static_cast<double>(blocked) / world / ps / steps, 6);
  }
  report.add("checkpoints per step",
             train.checkpoint_interval_steps ? 1.0 / train.checkpoint_interval_steps : 0.0, 4);
  report.add("network bytes per gpu per step", static_cast<double>(main.sum_bytes_sent) / world / steps, 0);
  add_memory_report(report, job);
  economics::add_report(report, exp, figures);
  if (resilience) {
    add_resilience_report(report, *resilience, *goodput_in, exp.reliability().monte_carlo_trials(), seed);
  }
  report.add("ranks", static_cast<std::uint64_t>(r.ranks));
  report.add("partition", partition_label(settings.options.partition, request.partition_map));
  report.add("lps", main.lps);
  add_engine_report(report, r);
  report.add("state digest", hex_digest(r.state_digest));
  if (output) {
    output->write(&report, comm);
    if (resilience) write_resilience_tables(request.output.path, *resilience);
  }
  return outcome;
}

}  // namespace warpsim::experiment
