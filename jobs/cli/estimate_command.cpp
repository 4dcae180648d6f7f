// `warpsim estimate SPEC`: compute-only step-time estimate of a training job, given as an experiment spec
// (its job) or a job spec (roofline compute model + pipeline schedule, communication free). The network-aware
// answer comes from the cluster simulation; this one bounds it from below and shows the compute/bubble split.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "experiment/memory_report.hpp"
#include "experiment/spec/cluster_spec.hpp"
#include "experiment/spec/experiment_spec.hpp"
#include "experiment/spec/job_spec.hpp"
#include "io/key_value_report.hpp"
#include "jobs/cli/command_registry.hpp"
#include "jobs/cli/usage_error.hpp"
#include "models/workload/gpu_program.hpp"
#include "models/workload/measured_table.hpp"
#include "models/workload/step_estimate.hpp"

namespace warpsim::cli {

namespace {

struct EstimateOptions {
  std::string spec_path;
  std::string measured_table;
  workload::EfficiencyParams efficiency;
  double op_overhead_us = workload::EfficiencyParams{}.op_overhead_s * 1e6;
  // Which of the three flags were given: they override the spec's compute_model fields.
  bool compute_given = false, memory_given = false, overhead_given = false;
  bool ops = false;  // --ops: the last stage's compute time per op name
};

// One op name's share of the last stage's compute time over the step (--ops).
struct OpTotal {
  std::uint64_t count = 0;
  double flops = 0, bytes = 0, seconds = 0;
};

// Prints the per-op table after the report: where a GPU's compute time goes, and each op's achieved rate,
// so that a user can see which kernel class the step rests on.
void print_op_table(const std::map<std::string, OpTotal>& totals) {
  std::vector<std::pair<std::string, OpTotal>> rows(totals.begin(), totals.end());
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
  double all = 0;
  for (const auto& r : rows) all += r.second.seconds;
  std::printf("\n%-28s %8s %12s %7s %10s %10s\n", "op (last stage, one step)", "count", "seconds", "share",
              "TFLOP/s", "GB/s");
  for (const auto& [name, t] : rows) {
    std::printf("%-28s %8llu %12.6f %6.1f%% %10.1f %10.1f\n", name.c_str(),
                static_cast<unsigned long long>(t.count), t.seconds, all > 0 ? 100 * t.seconds / all : 0.0,
                t.seconds > 0 ? t.flops / t.seconds / 1e12 : 0.0,
                t.seconds > 0 ? t.bytes / t.seconds / 1e9 : 0.0);
  }
}

int run_estimate(const EstimateOptions& o, int rank) {
  std::shared_ptr<const workload::MeasuredTable> table;
  if (!o.measured_table.empty()) {
    table = std::make_shared<const workload::MeasuredTable>(workload::MeasuredTable::load(o.measured_table));
  }
  spec::ClusterSpec cluster;  // an experiment spec's: its node groups give each rank's GPU type
  spec::JobSpec spec = spec::load_job_of_spec(o.spec_path, &cluster);
  const auto fraction = [](bool given, double v, const char* flag) {
    if (given && !(v > 0 && v <= 1)) throw UsageError(std::string(flag) + ": must be within (0, 1]");
  };
  fraction(o.compute_given, o.efficiency.compute_eff_max, "--compute-eff-max");
  fraction(o.memory_given, o.efficiency.memory_eff_max, "--memory-eff-max");
  auto& cm = *spec.mutable_compute_model();
  if (o.compute_given) cm.set_compute_eff_max(o.efficiency.compute_eff_max);
  if (o.memory_given) cm.set_memory_eff_max(o.efficiency.memory_eff_max);
  if (o.overhead_given) {
    if (o.op_overhead_us < 0) throw UsageError("--op-overhead-us: must be >= 0");
    cm.set_op_overhead_us(o.op_overhead_us);
    cm.set_no_op_overhead(o.op_overhead_us == 0);
  }
  workload::JobParams params = spec::to_job_params(spec);
  params.rank_gpu_types = spec::rank_gpu_types(cluster, params.world_size_gpus());
  const auto job =
      std::make_shared<const workload::Job>(std::move(params), workload::EfficiencyParams{}, table);
  const workload::StepEstimate est = workload::estimate_step(job);
  if (rank != 0) return 0;

  // Compute time by phase on the first and last stage (they carry the embedding and the output head).
  std::map<std::string, double> phase_seconds;
  std::map<std::string, OpTotal> op_totals;
  const std::uint32_t last = job->degrees().pp - 1;
  workload::GpuProgram prog(job, last * job->pipeline_stride(), 1);
  for (std::uint64_t i = 0; i < prog.size(); ++i) {
    const workload::Op op = prog.op(i);
    if (op.kind != workload::OpKind::kCompute) continue;
    const double seconds = job->compute(prog.rank()).seconds(op);
    phase_seconds[std::string(workload::to_string(op.phase))] += seconds;
    if (o.ops) {
      OpTotal& t = op_totals[std::string(op.name)];
      ++t.count;
      t.flops += op.flops;
      t.bytes += op.bytes;
      t.seconds += seconds;
    }
  }

  const auto& t = job->params().training;
  io::KeyValueReport report;
  report.add("model", std::string("estimate (compute only)"));
  report.add("job", job->params().name);
  report.add("gpu", std::string(job->gpu().name));
  report.add("gpus", static_cast<std::uint64_t>(job->world_size()));
  report.add("microbatches per step", static_cast<std::uint64_t>(job->microbatches()));
  report.add("parameters", workload::count_params(job->shape()).total(job->shape().layers), 0);
  report.add("step seconds", est.step_seconds, 4);
  report.add("pipeline seconds", est.pipeline_seconds, 4);
  report.add("optimizer seconds", est.optimizer_seconds, 4);
  report.add("bubble fraction", est.bubble_fraction, 4);
  for (const auto& [phase, s] : phase_seconds) report.add("last stage " + phase + " seconds", s, 4);
  report.add("tokens per second",
             static_cast<double>(t.global_batch_sequences) * job->shape().seq / est.step_seconds, 0);
  report.add("tflops per gpu", est.tflops_per_gpu(), 1);
  report.add("model tflops per gpu", est.model_tflops_per_gpu(), 1);
  report.add("hfu", est.hfu(), 4);
  report.add("mfu", est.mfu(), 4);
  experiment::add_memory_report(report, *job);
  report.print(std::cout);
  if (o.ops) {
    std::cout.flush();
    print_op_table(op_totals);
  }
  return 0;
}

}  // namespace

std::function<int()> add_estimate_command(CLI::App& app, const CommandEnv& env) {
  const int rank = env.rank;
  auto o = std::make_shared<EstimateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "estimate", "Compute-only step time of a training job (roofline + pipeline bubble, no network)");
  cmd->add_option(
         "SPEC", o->spec_path,
         "experiment spec (its job) or job spec; protobuf text format, or JSON when it starts with '{'")
      ->required();
  cmd->add_option("--measured-table", o->measured_table, "CSV op,flops,time_us overriding the compute model");
  // No captured default: unset means the GPU profile's measured value (docs/gpu-profiles.md).
  cmd->add_option("--compute-eff-max", o->efficiency.compute_eff_max,
                  "sustained large-GEMM efficiency (0,1] (default: the GPU profile's measured value)");
  cmd->add_option("--memory-eff-max", o->efficiency.memory_eff_max,
                  "streaming HBM efficiency (0,1] (default: the GPU profile's measured value)");
  cmd->add_option("--op-overhead-us", o->op_overhead_us,
                  "fixed per-kernel overhead, microseconds (default: the GPU profile's value)");
  cmd->add_flag(
      "--ops", o->ops,
      "also print the last pipeline stage's compute time per op name over one step (count, seconds, "
      "share, achieved TFLOP/s and GB/s)");
  return [o, cmd, rank]() -> int {
    if (!cmd->parsed()) return -1;
    o->compute_given = cmd->get_option("--compute-eff-max")->count() > 0;
    o->memory_given = cmd->get_option("--memory-eff-max")->count() > 0;
    o->overhead_given = cmd->get_option("--op-overhead-us")->count() > 0;
    return run_estimate(*o, rank);
  };
}

const CommandRegistrar kRegisterEstimate{"estimate", add_estimate_command};

}  // namespace warpsim::cli
