// Energy, cost, carbon and goodput keys of `warpsim run` (see run_economics.hpp, docs/energy-cost.md).
#include "experiment/run_economics.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "experiment/spec/cost_spec.hpp"
#include "experiment/spec/reliability_spec.hpp"
#include "models/energy/cluster_totals.hpp"
#include "models/energy/tco.hpp"
#include "models/reliability/checkpoint_model.hpp"
#include "models/reliability/straggler_program.hpp"

namespace warpsim::experiment::economics {

namespace {

using energy::Kind;

}  // namespace

std::uint32_t checkpoints_simulated(const spec::ExperimentSpec& exp) {
  const std::uint32_t every = exp.job().training().checkpoint_interval_steps();
  const bool storage = exp.cluster().storage().targets() > 0;
  return storage && every > 0 ? exp.simulation().steps() / every : 0;
}

namespace {

bool has_failures(const spec::ExperimentSpec& exp) {
  return exp.has_reliability() && exp.reliability().failures_size() > 0;
}

energy::CostParams cost_params(const spec::CostSpec& s) {
  energy::CostParams c;
  c[Kind::kGpu] = {s.gpu_capex_usd(), s.gpu_embodied_kgco2e()};
  c[Kind::kNic] = {s.nic_capex_usd(), s.nic_embodied_kgco2e()};
  c[Kind::kSwitch] = {s.switch_capex_usd(), s.switch_embodied_kgco2e()};
  c[Kind::kStorage] = {s.storage_capex_usd(), s.storage_embodied_kgco2e()};
  c.node = {s.node_capex_usd(), s.node_embodied_kgco2e()};  // a node's NVSwitch is part of the node
  c.amortization_years = s.amortization_years();
  c.pue = s.pue();
  c.electricity_usd_per_kwh = s.electricity_usd_per_kwh();
  c.grid_gco2e_per_kwh = s.grid_gco2e_per_kwh();
  return c;
}

// Failure rate of the whole cluster, per second: each component kind's count over its MTBF.
double failure_rate_per_s(const spec::ReliabilitySpec& r, const energy::ComponentTotals& t) {
  double rate = 0;
  for (const auto& f : r.failures()) {
    double count = 0;
    if (f.component() == "node") count = static_cast<double>(t.nodes);
    for (std::size_t k = 0; k < energy::kKinds; ++k) {
      if (f.component() == energy::to_string(static_cast<Kind>(k)))
        count = static_cast<double>(t.kinds[k].count);
    }
    rate += count / (f.mtbf_hours() * 3600);
  }
  return rate;
}

std::uint32_t interval_steps(const spec::ExperimentSpec& exp) {
  const std::uint32_t own = exp.reliability().checkpoint_interval_steps();
  return own != 0 ? own : exp.job().training().checkpoint_interval_steps();
}

}  // namespace

energy::PowerParams power_params(const spec::ExperimentSpec& exp) {
  energy::PowerParams p = energy::default_power_params(exp.job().gpu_type(), "job.gpu_type");
  const spec::PowerSpec& s = exp.cost().power();
  const auto pj = energy::joules_per_byte_from_pj_per_bit;
  if (s.has_gpu_idle_w()) p.gpu_idle_w = s.gpu_idle_w();
  if (s.has_gpu_busy_w()) p.gpu_busy_w = s.gpu_busy_w();
  if (s.has_node_static_w()) p.node_static_w = s.node_static_w();
  if (s.has_nic_static_w()) p.nic.static_w = s.nic_static_w();
  if (s.has_nic_pj_per_bit()) p.nic.joules_per_byte = pj(s.nic_pj_per_bit());
  if (s.has_nvswitch_static_w()) p.nvswitch.static_w = s.nvswitch_static_w();
  if (s.has_nvswitch_pj_per_bit()) p.nvswitch.joules_per_byte = pj(s.nvswitch_pj_per_bit());
  if (s.has_switch_static_w()) p.network_switch.static_w = s.switch_static_w();
  if (s.has_switch_pj_per_bit()) p.network_switch.joules_per_byte = pj(s.switch_pj_per_bit());
  if (s.has_storage_static_w()) p.storage.static_w = s.storage_static_w();
  if (s.has_storage_pj_per_bit()) p.storage.joules_per_byte = pj(s.storage_pj_per_bit());
  return p;
}

void validate(const spec::ExperimentSpec& exp, bool simulated, bool stall_given) {
  try {
    if (exp.has_cost()) spec::validate_cost_spec(exp.cost());
    if (!exp.has_reliability()) return;
    const auto& r = exp.reliability();
    spec::validate_reliability_spec(r);
    if (r.failures_size() == 0) return;
    if (interval_steps(exp) == 0) {
      throw std::invalid_argument(
          "reliability.checkpoint_interval_steps: required with failures (or set "
          "job.training.checkpoint_interval_steps)");
    }
    if (stall_given) return;
    if (!r.has_checkpoint_seconds() && !simulated) {
      throw std::invalid_argument(
          "reliability.checkpoint_seconds: required (nothing is simulated to measure the checkpoint stall, "
          "and there is no run summary with it and no cluster.storage to estimate it from)");
    }
    if (!r.has_checkpoint_seconds() && checkpoints_simulated(exp) == 0) {
      throw std::invalid_argument(
          "reliability.checkpoint_seconds: required: the simulated steps write no checkpoint to measure "
          "(that needs cluster.storage.targets > 0 and job.training.checkpoint_interval_steps <= "
          "simulation.steps)");
    }
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("experiment spec: ") + e.what());
  }
}

ProgramWrap program_wrap(const spec::ExperimentSpec& exp, std::uint64_t seed, std::uint32_t world) {
  if (!exp.has_reliability() || exp.reliability().stragglers().gpu_fraction() <= 0) return {};
  const auto& s = exp.reliability().stragglers();
  const reliability::StragglerParams params{s.gpu_fraction(), s.slowdown()};
  return [params, seed, world](std::shared_ptr<const cluster::GpuProgram> program) {
    return std::make_shared<const reliability::StragglerProgram>(std::move(program), seed, world, params);
  };
}

std::shared_ptr<const cluster::GpuProgram> wrapped(const ProgramWrap& wrap,
                                                   std::shared_ptr<const cluster::GpuProgram> program) {
  return wrap ? wrap(std::move(program)) : program;
}

energy::ComponentTotals reduce_totals(const cluster::ClusterModel& model, MPI_Comm comm) {
  energy::ComponentTotals t = energy::local_totals(model);
  std::uint64_t values[3 * energy::kKinds + 1];
  for (std::size_t k = 0; k < energy::kKinds; ++k) {
    values[3 * k] = t.kinds[k].count;
    values[3 * k + 1] = t.kinds[k].busy_ps;
    values[3 * k + 2] = t.kinds[k].bytes;
  }
  values[3 * energy::kKinds] = t.nodes;
  MPI_Allreduce(MPI_IN_PLACE, values, 3 * energy::kKinds + 1, MPI_UINT64_T, MPI_SUM, comm);
  for (std::size_t k = 0; k < energy::kKinds; ++k) {
    t.kinds[k] = {values[3 * k], values[3 * k + 1], values[3 * k + 2]};
  }
  // Counts come from the topology: a fidelity may model some hardware without an LP of its own (the
  // flow network stands for all switches), and the hardware still draws power and costs money.
  const energy::ComponentTotals hw = energy::inventory(model.topology());
  for (std::size_t k = 0; k < energy::kKinds; ++k) t.kinds[k].count = hw.kinds[k].count;
  t.nodes = hw.nodes;
  return t;
}

std::optional<GoodputInputs> goodput_inputs(const spec::ExperimentSpec& exp, const RunFigures& run) {
  if (!has_failures(exp)) return std::nullopt;
  const auto& r = exp.reliability();
  GoodputInputs in;
  in.clean_step_s = run.run_seconds / run.steps;
  if (run.run_seconds_without_checkpoints) in.clean_step_s = *run.run_seconds_without_checkpoints / run.steps;
  const double measured_c =
      run.run_seconds_without_checkpoints && run.checkpoints_simulated > 0
          ? (run.run_seconds - *run.run_seconds_without_checkpoints) / run.checkpoints_simulated
          : 0;
  reliability::CheckpointParams& cp = in.checkpoint;
  cp.mtbf_s = 1 / failure_rate_per_s(r, run.totals);
  cp.checkpoint_s = r.has_checkpoint_seconds() ? r.checkpoint_seconds()
                    : run.checkpoint_seconds   ? *run.checkpoint_seconds
                                               : measured_c;
  in.checkpoint_source = r.has_checkpoint_seconds() ? "spec"
                         : run.checkpoint_seconds   ? run.checkpoint_seconds_source
                                                    : "simulated";
  cp.restart_s = r.restart_seconds();
  in.interval_steps = interval_steps(exp);
  return in;
}

bool needs_checkpoint_measurement(const spec::ExperimentSpec& exp, std::uint32_t checkpoints_simulated) {
  return has_failures(exp) && checkpoints_simulated > 0;
}

void add_report(io::KeyValueReport& report, const spec::ExperimentSpec& exp, const RunFigures& run) {
  if (!exp.has_cost() && !exp.has_reliability()) return;
  const double step_s = run.run_seconds / run.steps;
  const auto& t = run.totals;

  // Stragglers: which GPUs is a function of the seed alone (printed so runs can be compared).
  if (exp.has_reliability() && exp.reliability().stragglers().gpu_fraction() > 0) {
    const auto& s = exp.reliability().stragglers();
    const auto slow = reliability::pick_stragglers(run.seed, run.world, s.gpu_fraction());
    report.add("straggler gpus", static_cast<std::uint64_t>(slow.size()));
    report.add("straggler slowdown", s.slowdown(), 3);
  }

  // Goodput under failures (analytic, and Monte-Carlo when asked), over the training run when its length
  // is known.
  double run_wall_factor = 1;  // expected wall time / failure-free time of the training run
  if (const std::optional<GoodputInputs> in = goodput_inputs(exp, run)) {
    const auto& r = exp.reliability();
    const reliability::CheckpointParams& cp = in->checkpoint;
    const std::string& source = in->checkpoint_source;
    const double clean_step_s = in->clean_step_s;
    const double interval_s = in->interval_s();
    const double optimum_s = reliability::optimal_interval_seconds(cp);
    report.add("system mtbf hours", cp.mtbf_s / 3600, 3);
    report.add("checkpoint seconds", cp.checkpoint_s, 6);
    report.add("checkpoint seconds source", source);
    report.add("restart seconds", cp.restart_s, 3);
    report.add("step seconds without checkpoints", clean_step_s, 6);
    report.add("checkpoint interval steps", static_cast<std::uint64_t>(interval_steps(exp)));
    report.add("checkpoint interval seconds", interval_s, 3);
    report.add("goodput",
               cp.mtbf_s > 0 ? interval_s / reliability::expected_segment_seconds(cp, interval_s) : 0, 4);
    report.add("optimal checkpoint interval seconds", optimum_s, 3);
    report.add("optimal checkpoint interval steps", std::max(1.0, std::round(optimum_s / clean_step_s)), 0);
    report.add("young checkpoint interval seconds", reliability::young_interval_seconds(cp), 3);
    report.add("goodput at optimal interval",
               optimum_s / reliability::expected_segment_seconds(cp, optimum_s), 4);
    if (exp.has_cost() && exp.cost().has_training_tokens()) {
      const double run_steps = std::ceil(exp.cost().training_tokens() / run.tokens_per_step);
      const double work_s = run_steps * clean_step_s;
      const reliability::RunOutcome o = reliability::expected_run(cp, interval_s, work_s);
      report.add("expected failures", o.failures, 1);
      report.add("expected lost work hours", o.lost_work_s / 3600, 2);
      report.add("expected restart hours", o.restart_s / 3600, 2);
      report.add("expected checkpoint hours", o.checkpoint_s / 3600, 2);
      run_wall_factor = o.wall_s / (run_steps * step_s);
      if (r.monte_carlo_trials() > 0) {
        const reliability::RunOutcome mc =
            reliability::monte_carlo_run(cp, interval_s, work_s, run.seed, r.monte_carlo_trials());
        report.add("monte carlo trials", static_cast<std::uint64_t>(r.monte_carlo_trials()));
        report.add("monte carlo goodput", mc.goodput(work_s), 4);
        report.add("monte carlo failures", mc.failures, 1);
        report.add("monte carlo lost work hours", mc.lost_work_s / 3600, 2);
      }
    }
  }

  if (!exp.has_cost()) return;
  const energy::PowerParams power = power_params(exp);
  const energy::EnergyBreakdown e = energy::run_energy(power, t, run.run_seconds);
  const double it_j = e.total_joules();
  const energy::CostParams c = cost_params(exp.cost());
  const double network_j = e.joules(Kind::kNic) + e.joules(Kind::kNvSwitch) + e.joules(Kind::kSwitch);
  // The power model used (also in a results file's /summary, next to the power_w series it gave:
  // models/energy/power_series.hpp).
  const auto pj = [](double joules_per_byte) { return joules_per_byte / 8e-12; };
  report.add("power gpu idle w", power.gpu_idle_w, 3);
  report.add("power gpu busy w", power.gpu_busy_w, 3);
  report.add("power node w", power.node_static_w, 3);
  report.add("power nic w", power.nic.static_w, 3);
  report.add("power nic pj per bit", pj(power.nic.joules_per_byte), 6);
  report.add("power nvswitch w", power.nvswitch.static_w, 3);
  report.add("power nvswitch pj per bit", pj(power.nvswitch.joules_per_byte), 6);
  report.add("power switch w", power.network_switch.static_w, 3);
  report.add("power switch pj per bit", pj(power.network_switch.joules_per_byte), 6);
  report.add("power storage w", power.storage.static_w, 3);
  report.add("power storage pj per bit", pj(power.storage.joules_per_byte), 6);
  report.add("energy seconds", run.run_seconds, 12);
  report.add("it energy joules", it_j, 3);
  report.add("average it power kw", it_j / run.run_seconds / 1e3, 3);
  report.add("it energy joules per step", it_j / run.steps, 1);
  report.add("it energy joules per token", it_j / run.steps / run.tokens_per_step, 6);
  report.add("gpu energy share", e.joules(Kind::kGpu) / it_j, 4);
  report.add("network energy share", network_j / it_j, 4);
  report.add("host energy share", e.node_joules / it_j, 4);
  report.add("storage energy share", e.joules(Kind::kStorage) / it_j, 4);
  const energy::CostFigures step = energy::cost_of(c, t, step_s, it_j / run.steps);
  report.add("facility energy kwh per step", step.facility_joules / energy::kJoulesPerKwh, 6);
  report.add("capex usd per step", step.capex_usd, 6);
  report.add("electricity usd per step", step.electricity_usd, 6);
  report.add("cost usd per step", step.total_usd(), 6);
  report.add("cost usd per million tokens", step.total_usd() / run.tokens_per_step * 1e6, 6);
  report.add("operating kgco2e per step", step.operating_kgco2e, 6);
  report.add("embodied kgco2e per step", step.embodied_kgco2e, 6);
  report.add("carbon kgco2e per million tokens", step.total_kgco2e() / run.tokens_per_step * 1e6, 6);
  if (!exp.cost().has_training_tokens()) return;
  // The training run: its steps at the simulated step time, stretched by failures when modelled (the
  // cluster is held, and draws the simulated average power, for the whole wall time).
  const double run_steps = std::ceil(exp.cost().training_tokens() / run.tokens_per_step);
  const double wall_s = run_steps * step_s * run_wall_factor;
  const energy::CostFigures whole = energy::cost_of(c, t, wall_s, it_j / run.run_seconds * wall_s);
  report.add("training run steps", run_steps, 0);
  report.add("training run days", wall_s / 86400, 3);
  report.add("training run facility energy mwh", whole.facility_joules / energy::kJoulesPerKwh / 1e3, 3);
  report.add("training run capex usd", whole.capex_usd, 0);
  report.add("training run electricity usd", whole.electricity_usd, 0);
  report.add("training run cost usd", whole.total_usd(), 0);
  report.add("training run operating tco2e", whole.operating_kgco2e / 1e3, 3);
  report.add("training run embodied tco2e", whole.embodied_kgco2e / 1e3, 3);
}

}  // namespace warpsim::experiment::economics
