// The resilience simulation of `warpsim run` (see resilience_run.hpp).
#include "experiment/resilience_run.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>

#include "experiment/engine_report.hpp"
#include "io/hdf5_table_writer.hpp"
#include "models/energy/power_model.hpp"
#include "partition/block_map.hpp"

namespace warpsim::experiment {

namespace {

using reliability::Component;

std::optional<double> mtbf_seconds(const spec::ReliabilitySpec& r, std::string_view component) {
  for (const auto& f : r.failures())
    if (f.component() == component) return f.mtbf_hours() * 3600;
  return std::nullopt;
}

// The job timeline's state, from the rank that holds its LP to every rank (the state is plain integers,
// and every rank runs the same binary).
reliability::JobTimelineState share_timeline(const reliability::ResilienceModel& model, int owner,
                                             MPI_Comm comm) {
  static_assert(std::is_trivially_copyable_v<reliability::JobTimelineState>);
  reliability::JobTimelineState s{};
  if (model.timeline().size() > 0) s = model.timeline().state(0);
  MPI_Bcast(&s, sizeof s, MPI_BYTE, owner, comm);
  return s;
}

// A double as text that reads back to the same value.
std::string exact(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

}  // namespace

reliability::ResilienceParams resilience_params(const spec::ExperimentSpec& exp,
                                                const economics::GoodputInputs& inputs,
                                                const energy::ComponentTotals& totals, std::uint32_t world) {
  using energy::Kind;
  const auto& r = exp.reliability();
  const auto& sim = r.simulate_failures();
  reliability::ResilienceParams p;
  p.horizon_s = sim.hours() * 3600;
  p.step_s = inputs.clean_step_s;
  p.interval_steps = inputs.interval_steps;
  p.checkpoint_s = inputs.checkpoint.checkpoint_s;
  p.restart_s = inputs.checkpoint.restart_s;
  p.repeat_probability = sim.correlated().probability();
  p.repeat_window_s = sim.correlated().within_hours() * 3600;
  p.spare_nodes = sim.spare_nodes();
  p.repair_s = sim.repair_hours() * 3600;
  // A node domain holds the node's share of the cluster's GPUs, NICs and NVSwitches; the job spans the
  // nodes its GPUs are on (ranks fill nodes in order).
  const std::uint64_t nodes = std::max<std::uint64_t>(1, totals.nodes);
  const auto per_node = [&](Kind k) { return static_cast<std::uint32_t>(totals[k].count / nodes); };
  const std::uint32_t gpus_per_node = std::max<std::uint32_t>(1, per_node(Kind::kGpu));
  reliability::DomainGroup node{
      "node", (world + gpus_per_node - 1) / gpus_per_node, {}, p.repeat_probability > 0};
  const std::tuple<std::string_view, Component, std::uint32_t> in_node[] = {
      {"gpu", Component::kGpu, gpus_per_node},
      {"node", Component::kNode, 1},
      {"nic", Component::kNic, per_node(Kind::kNic)},
      {"nvswitch", Component::kNvSwitch, per_node(Kind::kNvSwitch)}};
  for (const auto& [name, component, count] : in_node) {
    const auto mtbf = mtbf_seconds(r, name);
    if (mtbf && count > 0) node.classes.push_back({component, count, *mtbf});
  }
  if (!node.classes.empty()) p.groups.push_back(node);
  const std::tuple<std::string_view, Component, std::uint64_t> shared[] = {
      {"switch", Component::kSwitch, totals[Kind::kSwitch].count},
      {"storage", Component::kStorage, totals[Kind::kStorage].count}};
  for (const auto& [name, component, count] : shared) {
    const auto mtbf = mtbf_seconds(r, name);
    if (mtbf && count > 0)
      p.groups.push_back(
          {std::string(name), static_cast<std::uint32_t>(count), {{component, 1, *mtbf}}, false});
  }
  return p;
}

ResilienceRun run_resilience(const reliability::ResilienceParams& params, EngineConfig config,
                             const std::string& partition, MPI_Comm comm, bool record) {
  ResilienceRun out;
  out.params = params;
  reliability::ResilienceModel model(params, record);
  config.end_time = reliability::to_ps(params.horizon_s);
  config.progress_fraction = {};  // GVT / end time is the share done
  config.checkpoint = {};         // engine checkpoints cover the main simulation only
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  std::unique_ptr<LpMap> map;
  if (partition == "round-robin") {
    map = std::make_unique<RoundRobinLpMap>(model.lp_count(), ranks);
  } else {
    map = std::make_unique<BlockLpMap>(model.lp_count(), ranks);
  }
  Engine engine(model, *map, config, comm);
  out.run = engine.run();
  // The timeline is LP 0, which both maps give to rank 0: its committed rows are already where the report
  // and the results file are written.
  const int owner = map->rank_of(reliability::ResilienceModel::kJobLp);
  if (owner != 0) throw std::logic_error("resilience: the job timeline must be on rank 0");
  out.outcome =
      reliability::outcome_of(share_timeline(model, owner, comm), model.timeline(), config.end_time);
  if (record) {
    out.progress = model.timeline().progress();
    out.failures = model.timeline().failures();
  }
  return out;
}

ResilienceRun run_resilience_on_rank0(const reliability::ResilienceParams& params, EngineConfig config,
                                      MPI_Comm comm, bool record) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank != 0) return ResilienceRun{params, {}, {}, {}, {}};
  config.sync = SyncMode::kSequential;
  return run_resilience(params, config, "block", MPI_COMM_SELF, record);
}

void add_resilience_report(io::KeyValueReport& report, const ResilienceRun& r,
                           const economics::GoodputInputs& inputs, std::uint32_t monte_carlo_trials,
                           std::uint64_t seed) {
  const reliability::ResilienceOutcome& o = r.outcome;
  const double hour = 3600;
  // The analytic model for the same failure rate (the simulated domains: the job's nodes, not the whole
  // cluster's), C, R and interval, over the same horizon: the work it expects in that time.
  reliability::CheckpointParams cp = inputs.checkpoint;
  const double rate = r.params.system_rate_per_s();
  cp.mtbf_s = rate > 0 ? 1 / rate : 0;
  const double tau = r.params.interval_steps * r.params.step_s;
  const double horizon_s = reliability::to_seconds(o.horizon_ps);
  report.add("simulated failure hours", horizon_s / hour, 3);
  report.add("simulated failure domains", r.params.domain_count());
  report.add("simulated failure system mtbf hours", cp.mtbf_s / hour, 3);
  report.add("simulated failures", o.failures);
  if (r.params.repeat_probability > 0) report.add("simulated correlated repeats", o.repeats);
  report.add("simulated failures during checkpoints", o.failures_in_phase[1]);
  report.add("simulated failures during restarts", o.failures_in_phase[2]);
  if (r.params.repair_s > 0) {
    report.add("simulated spare nodes", std::uint64_t{r.params.spare_nodes});
    report.add("simulated restarts waiting for repair", o.waits);
    report.add("simulated repair wait hours", reliability::to_seconds(o.wait_ps) / hour, 3);
    report.add("simulated failures while waiting", o.failures_in_phase[3]);
  }
  report.add("simulated steps", o.progress_steps);
  report.add("simulated steps checkpointed", o.saved_steps);
  report.add("simulated steps run", o.steps_run);
  report.add("simulated goodput", o.goodput(), 4);
  report.add("simulated lost work hours", reliability::to_seconds(o.lost_ps) / hour, 3);
  report.add("simulated restart hours", reliability::to_seconds(o.restart_ps) / hour, 3);
  report.add("simulated checkpoint hours", reliability::to_seconds(o.checkpoint_ps) / hour, 3);
  report.add("simulated failure events", r.run.total.committed);
  report.add("simulated failure digest", hex_digest(r.run.state_digest));
  report.add("simulated failure wall seconds", r.run.wall_seconds, 3);
  if (!(cp.mtbf_s > 0)) return;
  const double goodput = tau / reliability::expected_segment_seconds(cp, tau);
  const double work_s = goodput * horizon_s;  // what the analytic model expects done in the horizon
  const reliability::RunOutcome a = reliability::expected_run(cp, tau, work_s);
  report.add("analytic goodput", goodput, 4);
  report.add("analytic failures", a.failures, 1);
  report.add("analytic lost work hours", a.lost_work_s / hour, 3);
  report.add("analytic restart hours", a.restart_s / hour, 3);
  report.add("analytic checkpoint hours", a.checkpoint_s / hour, 3);
  if (monte_carlo_trials == 0) return;
  const reliability::RunOutcome mc = reliability::monte_carlo_run(cp, tau, work_s, seed, monte_carlo_trials);
  report.add("monte carlo horizon goodput", mc.goodput(work_s), 4);
  report.add("monte carlo horizon failures", mc.failures, 1);
  report.add("monte carlo horizon lost work hours", mc.lost_work_s / hour, 3);
}

void write_resilience_tables(const std::string& path, const ResilienceRun& r) {
  const double ps = static_cast<double>(kPicosPerSecond);
  io::TableColumn time{"time_s", "s", "simulated time of the change", std::vector<double>{}};
  io::TableColumn steps{"steps", "steps", "progress: checkpointed steps + steps since the checkpoint",
                        std::vector<std::int64_t>{}};
  io::TableColumn saved{"checkpointed_steps", "steps", "steps in the last completed checkpoint",
                        std::vector<std::int64_t>{}};
  io::TableColumn row_phase{"phase", "",
                            "the job's phase from this row on: 0 working (progress grows one step per step "
                            "time until the next row), 1 checkpointing, 2 restarting, 3 waiting for repair",
                            std::vector<std::int64_t>{}};
  for (const auto& row : r.progress) {
    std::get<std::vector<double>>(time.values).push_back(static_cast<double>(row.time) / ps);
    std::get<std::vector<std::int64_t>>(steps.values).push_back(static_cast<std::int64_t>(row.steps));
    std::get<std::vector<std::int64_t>>(saved.values).push_back(static_cast<std::int64_t>(row.saved_steps));
    std::get<std::vector<std::int64_t>>(row_phase.values).push_back(static_cast<std::int64_t>(row.phase));
  }
  io::append_table(
      path, "resilience/progress", {time, steps, saved, row_phase},
      {{"description",
        "the job's progress: a row at each change of phase, two at each failure (the progress it "
        "found, then what is left); while working, one more step every step time"},
       {"step_seconds", exact(r.params.step_s)}});
  std::string names;
  for (unsigned c = 0; c < static_cast<unsigned>(Component::kCount); ++c)
    names += (c ? ", " : "") + std::to_string(c) + " " + std::string(to_string(static_cast<Component>(c)));
  io::TableColumn ftime{"time_s", "s", "when the component failed", std::vector<double>{}};
  io::TableColumn component{"component", "", "component class: " + names, std::vector<std::int64_t>{}};
  io::TableColumn index{"index", "", "the component within its class (GPU, NIC, node, switch, target index)",
                        std::vector<std::int64_t>{}};
  io::TableColumn domain{"domain_lp", "",
                         "LP of the failure domain (1.. = the job's nodes, then switches, "
                         "then storage targets)",
                         std::vector<std::int64_t>{}};
  io::TableColumn repeat{"repeat", "", "1 = a correlated repeat of an earlier failure",
                         std::vector<std::int64_t>{}};
  io::TableColumn phase{
      "phase", "", "what the job was doing: 0 working, 1 checkpointing, 2 restarting, 3 waiting for repair",
      std::vector<std::int64_t>{}};
  for (const auto& row : r.failures) {
    std::get<std::vector<double>>(ftime.values).push_back(static_cast<double>(row.time) / ps);
    std::get<std::vector<std::int64_t>>(component.values).push_back(static_cast<std::int64_t>(row.component));
    std::get<std::vector<std::int64_t>>(index.values).push_back(static_cast<std::int64_t>(row.index));
    std::get<std::vector<std::int64_t>>(domain.values).push_back(row.domain);
    std::get<std::vector<std::int64_t>>(repeat.values).push_back(row.repeat ? 1 : 0);
    std::get<std::vector<std::int64_t>>(phase.values).push_back(static_cast<std::int64_t>(row.phase));
  }
  io::append_table(path, "resilience/failures", {ftime, component, index, domain, repeat, phase},
                   {{"description", "committed failures that reached the job, in time order"}});
}

}  // namespace warpsim::experiment
