// `warpsim cost SPEC`: the economics of an experiment without simulating it: energy, cost and carbon per
// step, per token and per training run, and goodput under failures (the same keys and models as
// `warpsim run`, docs/energy-cost.md). The step comes from a finished run's summary (--summary: the
// `key: value` output of `warpsim run`, using its step time, compute time and network bytes) or, without
// one, from the compute-only estimate (communication free: a lower bound on time, energy and cost).
// --with merges the cost/reliability sections of another experiment file, so the economics of a shipped
// example can be studied without copying it.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "experiment/run_economics.hpp"
#include "experiment/training_setup.hpp"
#include "io/key_value_report.hpp"
#include "jobs/cli/command_registry.hpp"
#include "jobs/cli/usage_error.hpp"
#include "experiment/spec/cluster_spec.hpp"
#include "experiment/spec/experiment_spec.hpp"
#include "models/cluster/topology.hpp"
#include "models/energy/cluster_totals.hpp"
#include "models/workload/step_estimate.hpp"

namespace warpsim::cli {

namespace {

struct CostOptions {
  std::string spec_path;
  std::string with_path;
  std::string summary_path;
  std::uint64_t seed = 1;
};

std::string read_text(const std::string& path, const std::string& flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(flag + ": cannot read '" + path + "'");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// `key: value` lines of a `warpsim run` summary; the keys this command needs must be present and numeric.
std::map<std::string, double> read_summary(const std::string& path) {
  std::istringstream in(read_text(path, "--summary"));
  std::map<std::string, double> values;
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(": ");
    if (colon == std::string::npos) continue;
    try {
      std::size_t used = 0;
      const double v = std::stod(line.substr(colon + 2), &used);
      if (used == line.size() - colon - 2) values[line.substr(0, colon)] = v;
    } catch (const std::exception&) {
      // Not a number (names, digests): not needed here.
    }
  }
  for (const char* key : {"step seconds", "compute seconds", "network bytes per gpu per step", "gpus"}) {
    if (!values.count(key)) {
      throw UsageError("--summary: '" + path + "' has no numeric '" + key +
                       "' line (a `warpsim run` output?)");
    }
  }
  return values;
}

// Estimate of one checkpoint's stall (docs/energy-cost.md): the whole job's checkpoint (weights + optimizer
// state, or training.checkpoint_bytes) written at the storage's aggregate bandwidth, capped by the job's GPUs
// at their per-client bandwidth, plus one request latency; no network, no overlap with the step. None
// without storage targets.
std::optional<double> storage_write_seconds(const spec::ExperimentSpec& exp, const workload::Job& job) {
  const auto& st = exp.cluster().storage();
  if (st.targets() == 0 || !(st.bandwidth_gbps() > 0)) return std::nullopt;
  double gbps = st.targets() * st.bandwidth_gbps();
  if (st.per_client_bandwidth_gbps() > 0) gbps = std::min(gbps, job.world_size() * st.per_client_bandwidth_gbps());
  return job.checkpoint_bytes() * 8 / (gbps * 1e9) + static_cast<double>(st.request_latency_ns()) * 1e-9;
}

int run_cost(const CostOptions& o, int rank) {
  spec::ExperimentSpec exp = spec::load_experiment_spec(o.spec_path);
  if (!o.with_path.empty()) {
    const spec::ExperimentSpec extra =
        spec::parse_experiment_spec(read_text(o.with_path, "--with"), o.with_path);
    if (extra.has_cost()) *exp.mutable_cost() = extra.cost();
    if (extra.has_reliability()) *exp.mutable_reliability() = extra.reliability();
  }
  if (!exp.has_cost() && !exp.has_reliability()) {
    throw UsageError("SPEC: the experiment has no cost or reliability section (add one, or use --with)");
  }
  const auto job = experiment::build_job(exp);
  std::map<std::string, double> summary;
  if (!o.summary_path.empty()) summary = read_summary(o.summary_path);
  // The checkpoint stall, when the spec does not give it (reliability.checkpoint_seconds wins): the saved
  // run's simulated `checkpoint seconds`, else the time to write the checkpoint at the storage's bandwidth.
  experiment::economics::RunFigures run;
  if (!exp.reliability().has_checkpoint_seconds()) {
    if (summary.count("checkpoint seconds")) {
      run.checkpoint_seconds = summary.at("checkpoint seconds");
      run.checkpoint_seconds_source = "summary";
    } else if (const auto s = storage_write_seconds(exp, *job)) {
      run.checkpoint_seconds = *s;
      run.checkpoint_seconds_source = "storage bandwidth estimate";
    }
  }
  experiment::economics::validate(exp, /*simulated=*/false, run.checkpoint_seconds.has_value());
  const std::uint32_t world = job->world_size();
  const auto topology = cluster::make_topology(spec::to_cluster_params(exp.cluster()));
  run.totals = energy::inventory(*topology);
  run.world = world;
  run.seed = exp.simulation().seed() != 0 ? exp.simulation().seed() : o.seed;
  run.tokens_per_step =
      static_cast<double>(job->params().training.global_batch_sequences) * job->shape().seq;
  std::string source;
  double compute_s = 0, nic_bytes = 0;
  if (!o.summary_path.empty()) {
    const auto& s = summary;
    if (static_cast<std::uint32_t>(s.at("gpus")) != world) {
      throw UsageError("--summary: it is a run of " + std::to_string(static_cast<long>(s.at("gpus"))) +
                       " GPUs, the experiment has " + std::to_string(world));
    }
    run.run_seconds = s.at("step seconds");
    compute_s = s.at("compute seconds");
    nic_bytes = s.at("network bytes per gpu per step") * world;
    source = "summary";
  } else {
    const workload::StepEstimate est = workload::estimate_step(job);
    run.run_seconds = est.step_seconds;
    // Each GPU computes for its stage's share of the pipeline makespan, plus the optimizer.
    compute_s = (1 - est.bubble_fraction) * est.pipeline_seconds + est.optimizer_seconds;
    source = "compute-only estimate";
  }
  run.totals[energy::Kind::kGpu].busy_ps = static_cast<std::uint64_t>(compute_s * world * 1e12);
  run.totals[energy::Kind::kNic].bytes = static_cast<std::uint64_t>(nic_bytes);
  if (rank != 0) return 0;
  io::KeyValueReport report;
  report.add("model", std::string("cost"));
  report.add("experiment", exp.name());
  report.add("gpu", std::string(job->gpu().name));
  report.add("gpus", static_cast<std::uint64_t>(world));
  report.add("cluster gpus", run.totals[energy::Kind::kGpu].count);
  report.add("nodes", run.totals.nodes);
  report.add("switches", run.totals[energy::Kind::kSwitch].count);
  report.add("storage targets", run.totals[energy::Kind::kStorage].count);
  report.add("step source", source);
  report.add("step seconds", run.run_seconds, 6);
  report.add("compute seconds", compute_s, 6);
  report.add("tokens per step", run.tokens_per_step, 0);
  if (exp.has_reliability() && exp.reliability().stragglers().gpu_fraction() > 0) {
    // Slow GPUs change the step only through the simulated schedule; nothing here simulates it.
    report.add("stragglers", std::string("not applied (warpsim run simulates them)"));
    exp.mutable_reliability()->clear_stragglers();
  }
  experiment::economics::add_report(report, exp, run);
  report.print(std::cout);
  return 0;
}

}  // namespace

std::function<int()> add_cost_command(CLI::App& app, const CommandEnv& env) {
  const int rank = env.rank;
  auto o = std::make_shared<CostOptions>();
  CLI::App* cmd = app.add_subcommand(
      "cost", "Energy, cost, carbon and goodput of an experiment from a run summary or the compute estimate");
  cmd->add_option("SPEC", o->spec_path, "experiment spec (protobuf text format, or JSON)")->required();
  cmd->add_option("--with", o->with_path, "experiment file whose cost/reliability sections replace SPEC's");
  cmd->add_option("--summary", o->summary_path,
                  "saved `warpsim run SPEC` output to take the step from (default: compute-only estimate)");
  cmd->add_option("--seed", o->seed, "seed of the straggler choice and Monte-Carlo (spec's when set)")
      ->capture_default_str();
  return [o, cmd, rank]() -> int {
    if (!cmd->parsed()) return -1;
    return run_cost(*o, rank);
  };
}

const CommandRegistrar kRegisterCost{"cost", add_cost_command};

}  // namespace warpsim::cli
