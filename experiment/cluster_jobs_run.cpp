// Several jobs on one cluster: placement, one simulation, per-job figures (see cluster_jobs_run.hpp).
#include "experiment/cluster_jobs_run.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <stdexcept>
#include <utility>

#include "engine/kernel/engine.hpp"
#include "experiment/engine_report.hpp"
#include "experiment/engine_settings.hpp"
#include "experiment/job_placement.hpp"
#include "experiment/setting_error.hpp"
#include "experiment/spec/cluster_spec.hpp"
#include "experiment/spec/job_spec.hpp"
#include "experiment/training_partition.hpp"
#include "models/cluster/cluster_model.hpp"
#include "models/cluster/fat_tree.hpp"
#include "models/cluster/nccl_tuning.hpp"
#include "partition/partitioner.hpp"

namespace warpsim::experiment {

namespace {

// One job's GPU figures, reduced over the ranks.
struct JobFigures {
  std::uint64_t max_finish_ps = 0, sum_busy_ps = 0, sum_bytes = 0, not_done = 0;
  std::array<std::uint64_t, cluster::kWaitLabels> sum_blocked_ps{};
};

// The fabric's shared links (switch ports beyond the NICs, NVSwitches excluded), reduced over the ranks.
// Leaf up ports are the fat tree's oversubscribed tier: where two jobs' cross-leaf traffic meets.
struct FabricFigures {
  std::uint64_t leaf_up_busy_ps = 0, leaf_up_ports = 0, upper_busy_ps = 0, upper_ports = 0,
                max_port_busy_ps = 0;
  std::uint64_t switch_bytes = 0;
};

struct JobsSimulated {
  RunResult run;
  std::uint64_t lps = 0;
  std::vector<JobFigures> jobs;
  FabricFigures fabric;
};

JobsSimulated simulate_jobs(const ClusterJobsSetup& s, const EngineConfig& base, const LpMap& map,
                            MPI_Comm comm, SeriesRecorder* series) {
  cluster::ClusterModel model(s.params, s.program);
  if (series != nullptr) model.record_series(*series);
  EngineConfig config = base;
  const auto& program = *s.program;
  config.progress_fraction = [&model, &program, total = 0.0]() mutable {
    const auto& gpus = model.gpus();
    double done = 0;
    const bool count_total = total == 0;
    for (std::uint32_t slot = 0; slot < gpus.size(); ++slot) {
      const auto& st = gpus.state(slot);
      const std::uint32_t gpu = model.topology().gpu_of(st.id);
      if (program.job_of(gpu) < 0) continue;
      done += static_cast<double>(st.streams[0].pc);
      if (count_total) total += static_cast<double>(program.size(gpu));
    }
    return total > 0 ? done / total : 0.0;
  };
  Engine engine(model, map, config, comm);
  JobsSimulated out;
  out.run = engine.run();
  out.lps = model.lp_count();
  const std::size_t n = s.jobs.size();
  // Per job: [finish] maxed; [busy, bytes, not done, blocked x labels] summed.
  constexpr std::size_t kSums = 3 + cluster::kWaitLabels;
  std::vector<std::uint64_t> maxes(n + 1, 0), sums(n * kSums + 5, 0);
  const auto& gpus = model.gpus();
  for (std::uint32_t slot = 0; slot < gpus.size(); ++slot) {
    const auto& st = gpus.state(slot);
    const int j = program.job_of(model.topology().gpu_of(st.id));
    if (j < 0) continue;
    const auto ju = static_cast<std::size_t>(j);
    maxes[ju] = std::max<std::uint64_t>(maxes[ju], st.finish_ps);
    std::uint64_t* row = &sums[ju * kSums];
    row[0] += st.busy_ps;
    row[1] += st.bytes_sent;
    row[2] += st.done ? 0 : 1;
    const auto& clock = gpus.wait_clock(slot);
    for (std::size_t l = 0; l < clock.blocked_ps.size(); ++l) row[3 + l] += clock.blocked_ps[l];
  }
  // The fabric: leaf up ports (fat tree) and the tiers above; a torus's router ports count as "upper".
  const cluster::Topology& topo = model.topology();
  const std::uint32_t down =
      s.params.topology == cluster::TopologyKind::kFatTree ? cluster::FatTree(s.params).down_ports() : 0;
  std::uint64_t* fabric = &sums[n * kSums];
  const auto& switches = model.switches();
  for (std::uint32_t slot = 0; slot < switches.size(); ++slot) {
    const auto& st = switches.state(slot);
    const cluster::LpKind kind = topo.kind_of(st.id);
    if (kind == cluster::LpKind::kNvSwitch) continue;
    const bool leaf = kind == cluster::LpKind::kLeaf && down > 0;
    for (std::uint32_t p = 0; p < st.ports.size(); ++p) {
      if (leaf && p < down) continue;  // towards the NICs: one node's own traffic
      const auto& port = st.ports[p];
      fabric[leaf ? 0 : 2] += port.busy_ps;
      fabric[leaf ? 1 : 3] += 1;
      fabric[4] += port.bytes_tx;
      maxes[n] = std::max<std::uint64_t>(maxes[n], port.busy_ps);
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, maxes.data(), static_cast<int>(maxes.size()), MPI_UINT64_T, MPI_MAX, comm);
  MPI_Allreduce(MPI_IN_PLACE, sums.data(), static_cast<int>(sums.size()), MPI_UINT64_T, MPI_SUM, comm);
  std::uint64_t not_done = 0;
  for (std::size_t j = 0; j < n; ++j) {
    JobFigures f;
    f.max_finish_ps = maxes[j];
    const std::uint64_t* row = &sums[j * kSums];
    f.sum_busy_ps = row[0];
    f.sum_bytes = row[1];
    f.not_done = row[2];
    not_done += f.not_done;
    for (std::size_t l = 0; l < cluster::kWaitLabels; ++l) f.sum_blocked_ps[l] = row[3 + l];
    out.jobs.push_back(f);
  }
  if (not_done != 0) {
    throw std::runtime_error("the workload did not complete: " + std::to_string(not_done) +
                             " GPUs still running at the end time (raise simulation.end_time_s) or blocked");
  }
  out.fabric = {fabric[0], fabric[1], fabric[2], fabric[3], maxes[n], fabric[4]};
  return out;
}

}  // namespace

ClusterJobsSetup build_cluster_jobs(const spec::ExperimentSpec& exp) {
  ClusterJobsSetup s;
  s.params = spec::to_cluster_params(exp.cluster());
  s.steps = std::max<std::uint32_t>(1, exp.simulation().steps());
  const std::uint32_t cluster_gpus = s.params.nodes * s.params.gpus_per_node;
  std::vector<bool> used(cluster_gpus, false);
  std::vector<training::PlacedJob> placed;
  for (int i = 0; i < exp.jobs_size(); ++i) {
    const spec::ClusterJob& cj = exp.jobs(i);
    PlacedClusterJob pj;
    pj.name = cj.name();
    pj.placement = cj.placement();
    try {
      pj.job = std::make_shared<const workload::Job>(spec::to_job_params(cj.job()));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("experiment spec: jobs[" + std::to_string(i) + "].job: " + e.what());
    }
    pj.estimate = workload::estimate_step(pj.job);
    PlacementRequest request{cj.placement(), pj.job->world_size(), {cj.gpus().begin(), cj.gpus().end()}};
    training::PlacedJob p;
    p.gpus = place_job(s.params, request, i, used);
    // Whole-node placements keep rank r's rail (r % gpus_per_node), so the job's rings stay rail-aligned;
    // an explicit list that does not runs the flat rings over its GPUs in rank order.
    pj.rail_aligned = node_aligned(p.gpus, s.params.gpus_per_node);
    p.program = std::make_shared<const training::TrainingProgram>(
        pj.job, s.steps, s.params.storage_targets, 0, pj.rail_aligned ? s.params.gpus_per_node : 0,
        cluster::nccl_fabric(s.params));
    p.start_ps = static_cast<SimTime>(cj.start_time_s() * static_cast<double>(kPicosPerSecond));
    placed.push_back(std::move(p));
    s.jobs.push_back(std::move(pj));
  }
  s.program = std::make_shared<const training::MultiJobProgram>(std::move(placed), cluster_gpus);
  return s;
}

RunOutcome run_cluster_jobs(const spec::ExperimentSpec& exp, const RunRequest& request, MPI_Comm comm) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  if (request.attribute) throw SettingError("--attribute: not supported for an experiment with several jobs");
  if (!request.checkpoint.dir.empty() || !request.checkpoint.resume.empty())
    throw SettingError("--checkpoint-dir/--resume: not supported for an experiment with several jobs");
  const auto& sim = exp.simulation();
  const EngineSettings settings = resolve_engine_settings(request.engine, request.given, sim);
  const auto end = static_cast<SimTime>(sim.end_time_s() * static_cast<double>(kPicosPerSecond));
  const EngineConfig config = to_engine_config(settings.options, end, kPicosPerNano, ranks, settings.sources);
  const ClusterJobsSetup s = build_cluster_jobs(exp);
  const double ps = static_cast<double>(kPicosPerSecond);

  // The graph partitioners need one job's traffic graph: block, round-robin or a map file here.
  if (request.partition_map.empty()) {
    const auto p = partition::make_partitioner(settings.options.partition);
    if (p && p->needs() != partition::GraphNeeds::kNone) {
      throw SettingError(settings.sources.partition + ": '" + settings.options.partition +
                         "' needs one job's traffic graph; several jobs partition with block, round-robin or "
                         "--partition-map");
    }
  }
  const std::unique_ptr<LpMap> map =
      make_training_partition(settings.options.partition, request.partition_map, s.params, nullptr,
                              s.params.storage_targets, ranks, settings.sources.partition);
  RunOutcome outcome;
  io::KeyValueReport& report = outcome.report;
  const auto describe = [&](std::size_t j) {
    const auto& gpus = s.program->jobs()[j].gpus;
    const std::string key = "job " + s.jobs[j].name;
    report.add(key + " placement", s.jobs[j].placement);
    report.add(key + " gpus", static_cast<std::uint64_t>(gpus.size()));
    report.add(key + " first gpu", static_cast<std::uint64_t>(gpus.front()));
    report.add(key + " start seconds", static_cast<double>(s.program->jobs()[j].start_ps) / ps, 6);
  };
  if (request.check_only) {
    if (rank == 0) {
      report.add("experiment", exp.name());
      report.add("jobs", static_cast<std::uint64_t>(s.jobs.size()));
      report.add("cluster gpus", std::uint64_t{s.params.nodes} * s.params.gpus_per_node);
      for (std::size_t j = 0; j < s.jobs.size(); ++j) describe(j);
      report.add("spec", std::string("ok"));
    }
    return outcome;
  }
  double estimate_s = 0;
  for (std::size_t j = 0; j < s.jobs.size(); ++j)
    estimate_s = std::max(estimate_s, static_cast<double>(s.program->jobs()[j].start_ps) / ps +
                                          s.jobs[j].estimate.step_seconds * s.steps);
  const auto output = RunOutput::prepare(
      request.output, exp, resolve_sample_interval(request.given.sample_interval_ns, sim),
      {std::string(to_string(config.sync)), settings.options.partition, settings.options.seed, ranks},
      estimate_s, config.end_time, comm);
  const JobsSimulated main = simulate_jobs(s, config, *map, comm, output ? &output->recorder() : nullptr);

  // Per job (every rank alike, for the HDF5 groups): step = (last GPU's finish - start) / steps.
  std::uint64_t makespan_ps = 0;
  for (const auto& f : main.jobs) makespan_ps = std::max(makespan_ps, f.max_finish_ps);
  report.add("model", std::string("training, several jobs"));
  report.add("experiment", exp.name());
  report.add("cluster", exp.cluster().name());
  report.add("jobs", static_cast<std::uint64_t>(s.jobs.size()));
  report.add("cluster gpus", std::uint64_t{s.params.nodes} * s.params.gpus_per_node);
  report.add("steps", static_cast<std::uint64_t>(s.steps));
  report.add("sync", std::string(to_string(config.sync)));
  report.add("makespan seconds", static_cast<double>(makespan_ps) / ps, 6);
  for (std::size_t j = 0; j < s.jobs.size(); ++j) {
    const PlacedClusterJob& pj = s.jobs[j];
    const JobFigures& f = main.jobs[j];
    const workload::StepEstimate& est = pj.estimate;
    const double world = pj.job->world_size();
    const double start_s = static_cast<double>(s.program->jobs()[j].start_ps) / ps;
    const double step_s = (static_cast<double>(f.max_finish_ps) / ps - start_s) / s.steps;
    const double compute_s = static_cast<double>(f.sum_busy_ps) / world / ps / s.steps;
    const double bubble_s = est.bubble_fraction * est.pipeline_seconds;
    const double exposed_s = std::max(0.0, step_s - compute_s - bubble_s);
    const double tflops = est.hardware_flops / step_s / world / 1e12;
    const double mfu = est.model_flops / step_s / world / est.peak_flops;
    const double bytes = static_cast<double>(f.sum_bytes) / world / s.steps;
    const std::string key = "job " + pj.name;
    describe(j);
    report.add(key + " step seconds", step_s, 6);
    report.add(key + " estimate step seconds", est.step_seconds, 6);
    report.add(key + " tflops per gpu", tflops, 2);
    report.add(key + " mfu", mfu, 4);
    report.add(key + " compute seconds", compute_s, 6);
    report.add(key + " exposed communication seconds", exposed_s, 6);
    report.add(key + " exposed communication fraction", exposed_s / step_s, 4);
    report.add(key + " network bytes per gpu per step", bytes, 0);
    if (output) {
      output->add_result_group("jobs/" + pj.name,
                               {{"start_seconds", start_s, "s"},
                                {"gpus", world, "GPUs"},
                                {"first_gpu", static_cast<double>(s.program->jobs()[j].gpus.front()), "GPU"},
                                {"step_seconds", step_s, "s"},
                                {"estimate_step_seconds", est.step_seconds, "s"},
                                {"tflops_per_gpu", tflops, "TFLOP/s"},
                                {"mfu", mfu, "fraction"},
                                {"compute_seconds", compute_s, "s"},
                                {"exposed_communication_seconds", exposed_s, "s"},
                                {"network_bytes_per_gpu_per_step", bytes, "bytes"}});
    }
  }
  // Shared link utilization: busy (serializing) time of the fabric's ports over the makespan.
  const FabricFigures& fab = main.fabric;
  const double span = static_cast<double>(makespan_ps);
  const auto util = [span](std::uint64_t busy, std::uint64_t ports) {
    return ports > 0 && span > 0 ? static_cast<double>(busy) / (static_cast<double>(ports) * span) : 0.0;
  };
  const bool fabric_simulated = fab.leaf_up_ports + fab.upper_ports > 0;  // packet fidelity: switch LPs
  if (fabric_simulated) {
    report.add("fabric leaf uplink utilization", util(fab.leaf_up_busy_ps, fab.leaf_up_ports), 4);
    report.add("fabric upper tier port utilization", util(fab.upper_busy_ps, fab.upper_ports), 4);
    report.add("fabric busiest port utilization",
               span > 0 ? static_cast<double>(fab.max_port_busy_ps) / span : 0.0, 4);
    report.add("fabric bytes per step", static_cast<double>(fab.switch_bytes) / s.steps, 0);
    if (output) {
      output->add_result_group(
          "fabric", {{"leaf_uplink_utilization", util(fab.leaf_up_busy_ps, fab.leaf_up_ports), "fraction"},
                     {"upper_tier_port_utilization", util(fab.upper_busy_ps, fab.upper_ports), "fraction"},
                     {"busiest_port_utilization",
                      span > 0 ? static_cast<double>(fab.max_port_busy_ps) / span : 0.0, "fraction"}});
    }
  }
  if (rank != 0) {
    if (output) output->write(nullptr, comm);
    return RunOutcome{};
  }
  report.add("ranks", static_cast<std::uint64_t>(main.run.ranks));
  report.add("partition", partition_label(settings.options.partition, request.partition_map));
  report.add("lps", main.lps);
  add_engine_report(report, main.run);
  report.add("state digest", hex_digest(main.run.state_digest));
  if (output) output->write(&report, comm);
  return outcome;
}

}  // namespace warpsim::experiment
