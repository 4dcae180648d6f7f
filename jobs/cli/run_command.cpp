// `warpsim run SPEC`: simulates a training job (ExperimentSpec: cluster + job + simulation settings) on the
// packet-level cluster model and prints, on rank 0, the stable `key: value` summary users ask for: step
// time, tokens/s, TFLOP/s per GPU, MFU, the split of a step into compute, pipeline bubble and exposed
// communication, plus the engine's run statistics. Identical for every sync mode and rank count except the
// run-cost keys (wall seconds, event rate, rollbacks, peak rss).
#include <CLI/CLI.hpp>

#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <google/protobuf/text_format.h>

#include "engine/checkpoint_io.hpp"
#include "engine/kernel/engine.hpp"
#include "io/key_value_report.hpp"
#include "jobs/cli/command_registry.hpp"
#include "jobs/cli/engine_options.hpp"
#include "jobs/cli/partition_options.hpp"
#include "jobs/cli/run_economics.hpp"
#include "jobs/cli/run_output.hpp"
#include "jobs/cli/usage_error.hpp"
#include "jobs/spec/cluster_spec.hpp"
#include "jobs/spec/experiment_spec.hpp"
#include "jobs/spec/job_spec.hpp"
#include "models/cluster/cluster_model.hpp"
#include "models/training/training_program.hpp"
#include "models/workload/step_estimate.hpp"
#include "models/workload/transformer.hpp"

namespace warpsim::cli {

namespace {

struct RunOptions {
  std::string spec_path;
  EngineOptions engine;
  bool sync_given = false;
  bool seed_given = false;
  bool partition_given = false;
  std::string partition_map;
  bool check_only = false;
  bool attribute = false;
  RunOutputOptions output;
  CheckpointOptions checkpoint;
};

std::string hex(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// One simulation of `program` on the cluster, with the job GPUs' results reduced over ranks.
struct Simulated {
  RunResult run;
  std::uint64_t lps = 0;
  std::uint64_t max_finish_ps = 0, max_busy_ps = 0, min_busy_ps = ~0ull, sum_busy_ps = 0, sum_bytes_sent = 0;
  std::array<std::uint64_t, cluster::kWaitLabels> sum_blocked_ps{};  // per wait label, over the job's GPUs
  energy::ComponentTotals totals;  // per component kind, for the energy model (run_economics)
};

Simulated simulate(const cluster::ClusterParams& params,
                   std::shared_ptr<const training::TrainingProgram> program, EngineConfig config,
                   const LpMap& map, std::uint32_t world, SeriesRecorder* series = nullptr,
                   const economics::ProgramWrap& wrap = {}) {
  cluster::ClusterModel model(params, economics::wrapped(wrap, program));
  if (series != nullptr) model.record_series(*series);
  // Progress = GPU ops executed / ops in the programs of this rank's job GPUs: unlike simulated time it
  // needs no guess of the step time (the end time is only a cap).
  config.progress_fraction = [&model, &program, world, total = 0.0]() mutable {
    const auto& gpus = model.gpus();
    double done = 0;
    const bool count_total = total == 0;
    for (std::uint32_t slot = 0; slot < gpus.size(); ++slot) {
      const auto& s = gpus.state(slot);
      const std::uint32_t gpu = model.topology().gpu_of(s.id);
      if (gpu >= world) continue;
      done += static_cast<double>(s.pc);
      if (count_total) total += static_cast<double>(program->size(gpu));
    }
    return total > 0 ? done / total : 0.0;
  };
  Engine engine(model, map, config, MPI_COMM_WORLD);
  Simulated out;
  out.run = engine.run();
  out.lps = model.lp_count();
  // Stopped at a checkpoint (every rank alike): the GPUs are mid-program; the resumed run reports.
  if (out.run.stopped_at_checkpoint) return out;
  out.totals = economics::reduce_totals(model, MPI_COMM_WORLD);
  std::uint64_t maxes[2] = {0, 0};    // finish, busy
  std::uint64_t sums[3] = {0, 0, 0};  // busy, not done, bytes sent
  std::uint64_t mins[1] = {~0ull};    // busy
  const auto& gpus = model.gpus();
  for (std::uint32_t slot = 0; slot < gpus.size(); ++slot) {
    const auto& s = gpus.state(slot);
    if (model.topology().gpu_of(s.id) >= world) continue;  // s.id is the LP id, not the GPU index
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
                MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, maxes, 2, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, mins, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  if (sums[1] != 0) {
    throw std::runtime_error("training did not complete: " + std::to_string(sums[1]) +
                             " GPUs still running at the end time (raise simulation.end_time_s) or blocked");
  }
  out.max_finish_ps = maxes[0];
  out.max_busy_ps = maxes[1];
  out.min_busy_ps = mins[0];
  out.sum_busy_ps = sums[0];
  out.sum_bytes_sent = sums[2];
  return out;
}

// The compute-only schedule's makespan minus its busiest stage's compute time: how much of a step the
// pipeline's data dependencies cost with a free network.
double pipeline_dependency_seconds(const std::shared_ptr<const workload::Job>& shared,
                                   const workload::StepEstimate& est) {
  const workload::Job& job = *shared;
  const std::uint64_t slots = job.schedule().slots_per_stage();
  double busiest = 0;
  for (std::uint32_t stage = 0; stage < job.degrees().pp; ++stage) {
    const workload::GpuProgram prog(shared, stage * job.pipeline_stride(), 1);
    double busy = 0;
    for (std::uint64_t i = 0; i < prog.size(); ++i) {
      const workload::Op op = prog.op(i);
      if (op.kind != workload::OpKind::kCompute || prog.position(i).slot >= slots) continue;
      busy += op.fixed_duration_ps != 0 ? static_cast<double>(op.fixed_duration_ps) * 1e-12
                                        : job.compute().seconds(op);
    }
    busiest = std::max(busiest, busy);
  }
  return std::max(0.0, est.pipeline_seconds - busiest);
}

int run_training(RunOptions o, int rank, int ranks) {
  const spec::ExperimentSpec exp = spec::load_experiment_spec(o.spec_path);
  economics::validate(exp);
  const auto& sim = exp.simulation();
  // The spec's settings apply unless the flag was given on the command line.
  if (!o.sync_given && !sim.sync().empty()) o.engine.sync = sim.sync();
  if (!o.seed_given && sim.seed() != 0) o.engine.seed = static_cast<std::int64_t>(sim.seed());
  const std::string partition_flag = apply_spec_partition(o.engine, sim.partition(), o.partition_given);
  const auto end = static_cast<SimTime>(sim.end_time_s() * static_cast<double>(kPicosPerSecond));
  const EngineConfig config = to_engine_config(o.engine, end, kPicosPerNano);
  if (config.sync == SyncMode::kSequential && ranks != 1) {
    throw UsageError("--sync sequential runs on 1 rank (got " + std::to_string(ranks) + ")");
  }
  const cluster::ClusterParams params = spec::to_cluster_params(exp.cluster());
  // The GPU profile is checked by the workload model, which owns the profiles.
  const auto job = [&] {
    try {
      return std::make_shared<const workload::Job>(spec::to_job_params(exp.job()));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("experiment spec: job: ") + e.what());
    }
  }();
  const std::uint32_t steps = sim.steps();
  auto program = std::make_shared<const training::TrainingProgram>(job, steps, params.storage_targets);
  const workload::StepEstimate est = workload::estimate_step(job);
  if (o.check_only) {
    if (rank == 0) {
      std::uint64_t ops = 0;
      for (std::uint32_t g = 0; g < job->world_size(); g += job->pipeline_stride()) ops += program->size(g);
      io::KeyValueReport report;
      report.add("experiment", exp.name());
      report.add("gpus", static_cast<std::uint64_t>(job->world_size()));
      report.add("cluster gpus", std::uint64_t{params.nodes} * params.gpus_per_node);
      report.add("steps", static_cast<std::uint64_t>(steps));
      report.add("gpu ops per pipeline column", ops);
      report.add("estimate step seconds", est.step_seconds, 6);
      report.add("spec", std::string("ok"));
      report.print(std::cout);
    }
    return 0;
  }

  const std::uint32_t world = job->world_size();
  const economics::ProgramWrap wrap =
      economics::program_wrap(exp, static_cast<std::uint64_t>(o.engine.seed), world);
  const std::unique_ptr<LpMap> map = make_training_partition(o.engine.partition, o.partition_map, params, job,
                                                             params.storage_targets, ranks, partition_flag);
  const auto output = RunOutput::prepare(
      o.output, exp, {std::string(to_string(config.sync)), o.engine.partition, o.engine.seed, ranks},
      est.step_seconds * steps, config.end_time, MPI_COMM_WORLD);
  // Checkpoints cover the main simulation only; the what-if simulations below run whole in the process
  // that finishes the run (docs/checkpoint.md).
  EngineConfig main_config = config;
  apply_checkpoint_options(o.checkpoint, "--checkpoint-at-ns", kPicosPerNano, main_config);
  if (main_config.checkpoint.writes() || !main_config.checkpoint.resume.empty()) {
    std::string spec_text;
    google::protobuf::TextFormat::PrintToString(exp, &spec_text);
    Fnv1a spec_hash;
    spec_hash.update(spec_text.data(), spec_text.size());
    auto& id = main_config.checkpoint.identity;
    id.emplace_back("spec hash", hex(spec_hash.value()));
    id.emplace_back("series interval ps", output ? std::to_string(output->interval()) : std::string("none"));
    if (output) {
      SeriesRecorder& recorder = output->recorder();
      main_config.checkpoint.save_extra = [&recorder](std::ostream& out) { recorder.save(out); };
      main_config.checkpoint.load_extra = [&recorder](std::istream& in) { recorder.load(in); };
    }
  }
  const Simulated main =
      simulate(params, program, main_config, *map, world, output ? &output->recorder() : nullptr, wrap);
  const RunResult& r = main.run;
  if (r.stopped_at_checkpoint) {
    if (rank == 0) {
      std::cout << "checkpoint: " << r.checkpoint_path << "\n"
                << "checkpoint simulated seconds: "
                << static_cast<double>(r.checkpoint_time) / static_cast<double>(kPicosPerSecond) << "\n"
                << "stopped: resume with --resume " << o.checkpoint.dir << "\n";
    }
    return kCheckpointStopExitCode;
  }
  const std::uint64_t maxes[2] = {main.max_finish_ps, main.max_busy_ps};
  const std::uint64_t sums[3] = {main.sum_busy_ps, 0, main.sum_bytes_sent};
  const std::uint64_t mins[1] = {main.min_busy_ps};

  // What-if attribution: the step again with one class of communication removed (both ends), for each
  // class the job has. Exposed time of a class = full step - step without it.
  std::vector<std::pair<training::CommClass, double>> attributed;
  if (o.attribute) {
    for (unsigned c = 0; c < static_cast<unsigned>(training::CommClass::kCount); ++c) {
      const auto cls = static_cast<training::CommClass>(c);
      auto ablated = std::make_shared<const training::TrainingProgram>(job, steps, params.storage_targets,
                                                                       training::bit(cls));
      bool present = false;
      for (std::uint32_t g = 0; g < world && !present; g += job->pipeline_stride()) {
        present = ablated->size(g) != program->size(g);
      }
      if (!present) continue;
      const Simulated a = simulate(params, ablated, config, *map, world, nullptr, wrap);
      double delta = static_cast<double>(main.max_finish_ps) - static_cast<double>(a.max_finish_ps);
      // Without pipeline messages the stages no longer wait for each other, so the step also loses the
      // schedule's own dependency wait (compute-only makespan - busiest stage): not communication.
      if (cls == training::CommClass::kPipeline) {
        delta -= pipeline_dependency_seconds(job, est) * steps * static_cast<double>(kPicosPerSecond);
      }
      attributed.emplace_back(cls, delta);
    }
  }
  // The checkpoint stall for the goodput model: the same steps again without their checkpoint writes.
  const std::uint32_t checkpoints = economics::checkpoints_simulated(exp);
  std::optional<double> without_checkpoints;
  if (economics::needs_checkpoint_measurement(exp, checkpoints)) {
    auto plain = std::make_shared<const training::TrainingProgram>(
        job, steps, params.storage_targets, training::bit(training::CommClass::kCheckpoint));
    const Simulated p = simulate(params, plain, config, *map, world, nullptr, wrap);
    without_checkpoints = static_cast<double>(p.max_finish_ps) / static_cast<double>(kPicosPerSecond);
  }
  if (rank != 0) {
    if (output) output->write(nullptr, MPI_COMM_WORLD);
    return 0;
  }

  const double ps = static_cast<double>(kPicosPerSecond);
  const double step_s = static_cast<double>(maxes[0]) / ps / steps;
  const double compute_s = static_cast<double>(sums[0]) / world / ps / steps;
  // The bubble a compute-only schedule has (the network can only lengthen it; the rest is attributed to
  // communication).
  const double bubble_s = est.bubble_fraction * est.pipeline_seconds;
  const double exposed_s = std::max(0.0, step_s - compute_s - bubble_s);
  const auto& t = job->params().training;
  const double tokens = static_cast<double>(t.global_batch_sequences) * job->shape().seq;

  io::KeyValueReport report;
  report.add("model", std::string("training"));
  report.add("experiment", exp.name());
  report.add("job", job->params().name);
  report.add("cluster", exp.cluster().name());
  report.add("gpu", std::string(job->gpu().name));
  report.add("gpus", static_cast<std::uint64_t>(world));
  report.add("cluster gpus", std::uint64_t{params.nodes} * params.gpus_per_node);
  report.add("steps", static_cast<std::uint64_t>(steps));
  report.add("microbatches per step", static_cast<std::uint64_t>(job->microbatches()));
  report.add("sync", std::string(to_string(config.sync)));
  report.add("step seconds", step_s, 6);
  report.add("estimate step seconds", est.step_seconds, 6);
  report.add("tokens per second", tokens / step_s, 0);
  report.add("tflops per gpu", est.hardware_flops / step_s / world / 1e12, 2);
  report.add("model tflops per gpu", est.model_flops / step_s / world / 1e12, 2);
  report.add("mfu", est.model_flops / step_s / world / est.peak_flops, 4);
  report.add("hfu", est.hardware_flops / step_s / world / est.peak_flops, 4);
  report.add("compute seconds", compute_s, 6);
  report.add("compute seconds min", static_cast<double>(mins[0]) / ps / steps, 6);
  report.add("compute seconds max", static_cast<double>(maxes[1]) / ps / steps, 6);
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
  report.add("checkpoints per step", t.checkpoint_interval_steps ? 1.0 / t.checkpoint_interval_steps : 0.0,
             4);
  report.add("network bytes per gpu per step", static_cast<double>(sums[2]) / world / steps, 0);
  economics::add_report(report, exp,
                        {.run_seconds = static_cast<double>(maxes[0]) / ps,
                         .steps = steps,
                         .tokens_per_step = tokens,
                         .world = world,
                         .checkpoints_simulated = checkpoints,
                         .run_seconds_without_checkpoints = without_checkpoints,
                         .totals = main.totals,
                         .seed = static_cast<std::uint64_t>(o.engine.seed)});
  report.add("ranks", static_cast<std::uint64_t>(r.ranks));
  report.add("partition", partition_label(o.engine, o.partition_map));
  report.add("lps", main.lps);
  add_engine_report(report, r);
  report.add("state digest", hex(r.state_digest));
  if (output) output->write(&report, MPI_COMM_WORLD);
  report.print(std::cout);
  return 0;
}

}  // namespace

std::function<int()> add_run_command(CLI::App& app, const CommandEnv& env) {
  const int rank = env.rank;
  const int ranks = env.ranks;
  auto o = std::make_shared<RunOptions>();
  CLI::App* cmd =
      app.add_subcommand("run", "Simulate a training job on a cluster (ExperimentSpec) and summarize");
  cmd->add_option("SPEC", o->spec_path, "experiment spec (protobuf text format, or JSON)")->required();
  cmd->add_flag("--attribute", o->attribute,
                "also attribute exposed communication per parallelism kind and the checkpoint stall (one "
                "more simulation per kind the job has, without that kind's traffic)");
  cmd->add_flag("--check", o->check_only, "validate the spec and print its size, without simulating");
  add_engine_options(*cmd, o->engine);
  add_run_partition_options(*cmd, o->engine, o->partition_map);
  add_run_output_options(*cmd, o->output);
  add_checkpoint_options(*cmd, o->checkpoint, "--checkpoint-at-ns");
  return [o, cmd, rank, ranks]() -> int {
    if (!cmd->parsed()) return -1;
    o->output.interval_given = cmd->get_option("--sample-interval")->count() > 0;
    o->sync_given = cmd->get_option("--sync")->count() > 0;
    o->seed_given = cmd->get_option("--seed")->count() > 0;
    o->partition_given = cmd->get_option("--partition")->count() > 0;
    return run_training(*o, rank, ranks);
  };
}

const CommandRegistrar kRegisterRun{"run", add_run_command};

}  // namespace warpsim::cli
