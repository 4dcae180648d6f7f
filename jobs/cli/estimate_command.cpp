// `warpsim estimate JOBSPEC`: compute-only step-time estimate of a training job (roofline compute model +
// pipeline schedule, communication free). The network-aware answer comes from the cluster simulation; this
// one bounds it from below and shows the compute/bubble split.
#include <CLI/CLI.hpp>

#include <iostream>
#include <map>
#include <memory>
#include <string>

#include "io/key_value_report.hpp"
#include "jobs/cli/command_registry.hpp"
#include "jobs/cli/usage_error.hpp"
#include "jobs/spec/job_spec.hpp"
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
};

int run_estimate(const EstimateOptions& o, int rank) {
  workload::EfficiencyParams eff = o.efficiency;
  eff.op_overhead_s = o.op_overhead_us * 1e-6;
  std::shared_ptr<const workload::MeasuredTable> table;
  if (!o.measured_table.empty()) {
    table = std::make_shared<const workload::MeasuredTable>(workload::MeasuredTable::load(o.measured_table));
  }
  const auto job = std::make_shared<const workload::Job>(spec::load_job_spec(o.spec_path), eff, table);
  const workload::StepEstimate est = workload::estimate_step(job);
  if (rank != 0) return 0;

  // Compute time by phase on the first and last stage (they carry the embedding and the output head).
  std::map<std::string, double> phase_seconds;
  const std::uint32_t last = job->degrees().pp - 1;
  workload::GpuProgram prog(job, last * job->pipeline_stride(), 1);
  for (std::uint64_t i = 0; i < prog.size(); ++i) {
    const workload::Op op = prog.op(i);
    if (op.kind != workload::OpKind::kCompute) continue;
    phase_seconds[std::string(workload::to_string(op.phase))] +=
        job->compute().seconds({op.name, op.flops, op.bytes, op.dtype});
  }

  const auto& t = job->spec().training();
  io::KeyValueReport report;
  report.add("model", std::string("estimate (compute only)"));
  report.add("job", job->spec().name());
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
             static_cast<double>(t.global_batch_sequences()) * job->shape().seq / est.step_seconds, 0);
  report.add("tflops per gpu", est.tflops_per_gpu(), 1);
  report.add("model tflops per gpu", est.model_tflops_per_gpu(), 1);
  report.add("hfu", est.hfu(), 4);
  report.add("mfu", est.mfu(), 4);
  report.print(std::cout);
  return 0;
}

}  // namespace

std::function<int()> add_estimate_command(CLI::App& app, const CommandEnv& env) {
  const int rank = env.rank;
  auto o = std::make_shared<EstimateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "estimate", "Compute-only step time of a training job spec (roofline + pipeline bubble, no network)");
  cmd->add_option("JOBSPEC", o->spec_path, "job spec (.json = JSON, otherwise protobuf text format)")
      ->required();
  cmd->add_option("--measured-table", o->measured_table, "CSV op,flops,time_us overriding the compute model");
  cmd->add_option("--compute-eff-max", o->efficiency.compute_eff_max, "asymptotic GEMM efficiency (0,1]")
      ->capture_default_str();
  cmd->add_option("--memory-eff-max", o->efficiency.memory_eff_max, "asymptotic HBM efficiency (0,1]")
      ->capture_default_str();
  cmd->add_option("--op-overhead-us", o->op_overhead_us, "fixed per-kernel overhead, microseconds")
      ->capture_default_str();
  return [o, cmd, rank]() -> int {
    if (!cmd->parsed()) return -1;
    return run_estimate(*o, rank);
  };
}

const CommandRegistrar kRegisterEstimate{"estimate", add_estimate_command};

}  // namespace warpsim::cli
