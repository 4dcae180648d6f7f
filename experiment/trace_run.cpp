// `warpsim run` replaying Chakra traces (see trace_run.hpp).
#include "experiment/trace_run.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>

#include "engine/kernel/engine.hpp"
#include "experiment/engine_report.hpp"
#include "experiment/setting_error.hpp"
#include "experiment/spec/cluster_spec.hpp"
#include "experiment/training_partition.hpp"
#include "experiment/training_simulation.hpp"
#include "models/cluster/collective_algorithms.hpp"
#include "models/cluster/topology.hpp"
#include "models/workload/gpu_profile.hpp"
#include "partition/partitioner.hpp"

namespace warpsim::experiment {

namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& field, const std::string& what) {
  throw std::invalid_argument("experiment spec: chakra_trace." + field + ": " + what);
}

// "<prefix>.<rank>.et" -> (prefix, rank); nullopt for other names.
std::optional<std::pair<std::string, std::uint32_t>> split_name(const std::string& name) {
  if (!name.ends_with(".et")) return std::nullopt;
  const std::string stem = name.substr(0, name.size() - 3);
  const auto dot = stem.rfind('.');
  if (dot == std::string::npos || dot + 1 == stem.size() || stem.size() - dot - 1 > 9) return std::nullopt;
  const std::string digits = stem.substr(dot + 1);
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  return std::pair{stem.substr(0, dot), static_cast<std::uint32_t>(std::stoul(digits))};
}

std::string gpu_type_of(const spec::ExperimentSpec& exp) {
  if (!exp.chakra_trace().gpu_type().empty()) return exp.chakra_trace().gpu_type();
  if (!exp.cluster_gpu_type().empty()) return exp.cluster_gpu_type();
  return "H100-SXM";
}

// The LP -> rank map: the strategies that need no workload graph, or a map file.
std::unique_ptr<LpMap> trace_partition(const EngineSettings& settings, const std::string& map_file,
                                       const cluster::ClusterParams& params, int ranks) {
  const std::string& strategy = settings.options.partition;
  if (map_file.empty()) {
    const auto p = partition::make_partitioner(strategy);
    if (p && p->needs() != partition::GraphNeeds::kNone) {
      throw SettingError(settings.sources.partition + ": '" + strategy +
                         "' needs a training job's traffic graph; a Chakra replay partitions with block, "
                         "round-robin or --partition-map");
    }
  }
  return make_training_partition(strategy, map_file, params, nullptr, params.storage_targets, ranks,
                                 settings.sources.partition);
}

io::KeyValueReport check_report(const spec::ExperimentSpec& exp, const training::TraceProgram& program,
                                const std::vector<std::string>& files, const cluster::ClusterParams& params,
                                std::uint64_t lps) {
  io::KeyValueReport report;
  std::uint64_t ops = 0;
  for (std::uint32_t r = 0; r < program.ranks(); ++r) ops += program.size(program.gpu_of(r));
  const training::TraceCounts c = program.total_counts();
  report.add("experiment", exp.name());
  report.add("trace folder", exp.chakra_trace().folder());
  report.add("trace files", static_cast<std::uint64_t>(files.size()));
  report.add("trace ranks", static_cast<std::uint64_t>(program.ranks()));
  report.add("cluster gpus", std::uint64_t{params.nodes} * params.gpus_per_node);
  report.add("trace nodes", c.nodes);
  report.add("replayed nodes", c.compute + c.collectives + c.sends + c.recvs);
  report.add("skipped nodes",
             c.skipped_cpu + c.skipped_other + c.skipped_empty + c.skipped_collectives + c.skipped_p2p);
  report.add("gpu ops", ops);
  report.add("lps", lps);
  report.add("spec", std::string("ok"));
  return report;
}

}  // namespace

std::vector<std::string> chakra_trace_files(const spec::ChakraTraceSpec& c) {
  const fs::path folder(c.folder());
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) fail("folder", "'" + c.folder() + "' is not a readable folder");
  std::map<std::string, std::set<std::uint32_t>> by_prefix;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    const auto parts = split_name(entry.path().filename().string());
    if (parts) by_prefix[parts->first].insert(parts->second);
  }
  std::string prefix = c.file_prefix();
  if (prefix.empty()) {
    if (by_prefix.empty()) fail("folder", "no <prefix>.<rank>.et files in '" + c.folder() + "'");
    if (by_prefix.size() > 1) {
      std::string names;
      for (const auto& [p, _] : by_prefix) names += (names.empty() ? "" : ", ") + p;
      fail("file_prefix", "required: the folder holds traces of several prefixes (" + names + ")");
    }
    prefix = by_prefix.begin()->first;
  }
  const auto it = by_prefix.find(prefix);
  if (it == by_prefix.end())
    fail("file_prefix", "no '" + prefix + ".<rank>.et' files in '" + c.folder() + "'");
  const std::set<std::uint32_t>& ranks = it->second;
  std::vector<std::string> files;
  for (std::uint32_t r = 0; r < ranks.size(); ++r) {
    if (ranks.count(r) == 0)
      fail("folder", "'" + prefix + "." + std::to_string(r) + ".et' is missing (ranks must be 0.." +
                         std::to_string(*ranks.rbegin()) + ")");
    files.push_back((folder / (prefix + "." + std::to_string(r) + ".et")).string());
  }
  return files;
}

std::shared_ptr<const training::TraceProgram> build_trace_program(const spec::ExperimentSpec& exp) {
  const spec::ChakraTraceSpec& c = exp.chakra_trace();
  const std::vector<std::string> files = chakra_trace_files(c);
  std::vector<workload::chakra::Trace> traces;
  traces.reserve(files.size());
  for (const auto& f : files) traces.push_back(workload::chakra::read_trace(f));

  training::TraceProgramOptions options;
  options.rank_to_gpu.assign(c.rank_to_gpu().begin(), c.rank_to_gpu().end());
  if (!options.rank_to_gpu.empty() && options.rank_to_gpu.size() != files.size()) {
    fail("rank_to_gpu", std::to_string(options.rank_to_gpu.size()) + " entries for " +
                            std::to_string(files.size()) + " trace files");
  }
  options.cluster_gpus = exp.cluster().nodes() * exp.cluster().scale_up().gpus_per_node();
  for (const auto& pg : c.process_group()) {
    if (!options.process_groups
             .emplace(pg.name(), std::vector<std::uint32_t>(pg.ranks().begin(), pg.ranks().end()))
             .second) {
      fail("process_group", "'" + pg.name() + "' is given twice");
    }
  }
  const std::string algorithm = c.allreduce_algorithm().empty() ? "ring" : c.allreduce_algorithm();
  const cluster::CollectiveAlgorithm* a = cluster::find_dp_allreduce_algorithm(algorithm);
  if (a == nullptr) {
    // The registry's algorithms that the training adapter can run as an all-reduce.
    std::string names;
    const std::string all = cluster::collective_algorithm_names() + ", ";
    for (std::size_t at = 0, next; (next = all.find(", ", at)) != std::string::npos; at = next + 2) {
      const std::string name = all.substr(at, next - at);
      if (cluster::find_dp_allreduce_algorithm(name) != nullptr) names += (names.empty() ? "" : ", ") + name;
    }
    fail("allreduce_algorithm", "'" + algorithm + "' (expected one of " + names + ")");
  }
  options.collectives.dp_allreduce = a->id;
  const std::string gpu = gpu_type_of(exp);
  const auto compute = std::make_shared<const workload::ComputeModel>(
      workload::find_gpu_profile(gpu, "chakra_trace.gpu_type"));
  try {
    return std::make_shared<const training::TraceProgram>(traces, options, compute);
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    // Errors about the spec's mapping name their field; errors about a trace name the file already.
    if (what.starts_with("rank_to_gpu") || what.starts_with("process_group"))
      throw std::invalid_argument("experiment spec: chakra_trace." + what);
    throw;
  }
}

RunOutcome run_trace(const spec::ExperimentSpec& exp, const RunRequest& request, MPI_Comm comm) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  if (request.attribute) throw SettingError("--attribute: not supported for a Chakra trace replay");
  if (!request.checkpoint.dir.empty() || !request.checkpoint.resume.empty())
    throw SettingError("--checkpoint-dir/--resume: not supported for a Chakra trace replay");
  const auto& sim = exp.simulation();
  const EngineSettings settings = resolve_engine_settings(request.engine, request.given, sim);
  const auto end = static_cast<SimTime>(sim.end_time_s() * static_cast<double>(kPicosPerSecond));
  const EngineConfig config = to_engine_config(settings.options, end, kPicosPerNano, ranks, settings.sources);
  const cluster::ClusterParams params = spec::to_cluster_params(exp.cluster());
  const std::vector<std::string> files = chakra_trace_files(exp.chakra_trace());
  const auto program = build_trace_program(exp);
  const std::unique_ptr<LpMap> map = trace_partition(settings, request.partition_map, params, ranks);
  const std::uint64_t lps = cluster::make_topology(params)->lp_count();

  RunOutcome outcome;
  if (request.check_only) {
    if (rank == 0) outcome.report = check_report(exp, *program, files, params, lps);
    return outcome;
  }
  const training::TraceCounts counts = program->total_counts();
  std::uint64_t longest_compute_ps = 0;
  for (std::uint32_t r = 0; r < program->ranks(); ++r)
    longest_compute_ps = std::max(longest_compute_ps, program->counts(r).recorded_compute_ps);
  const double ps = static_cast<double>(kPicosPerSecond);
  // The automatic series interval is sized on a lower bound of the run: the longest rank's compute.
  const double lower_bound_s = std::max(1e-6, static_cast<double>(longest_compute_ps) / ps);
  const auto output = RunOutput::prepare(
      request.output, exp, resolve_sample_interval(request.given.sample_interval_ns, sim),
      {std::string(to_string(config.sync)), settings.options.partition, settings.options.seed, ranks},
      lower_bound_s, config.end_time, comm);
  const ProgramExtent extent{[program](std::uint32_t gpu) { return program->rank_of(gpu).has_value(); },
                             [program](std::uint32_t gpu) { return program->size(gpu); }};
  const Simulated main =
      simulate_program(params, program, extent, config, *map, comm, output ? &output->recorder() : nullptr);
  if (rank != 0) {
    if (output) output->write(nullptr, comm);
    return outcome;
  }

  const double world = program->ranks();
  const double makespan_s = static_cast<double>(main.max_finish_ps) / ps;
  const double compute_s = static_cast<double>(main.sum_busy_ps) / world / ps;
  const double collective_s =
      static_cast<double>(main.sum_blocked_ps[training::wait_label(training::CommClass::kData)]) / world / ps;
  const double p2p_s =
      static_cast<double>(main.sum_blocked_ps[training::wait_label(training::CommClass::kPipeline)]) / world /
      ps;
  io::KeyValueReport& report = outcome.report;
  report.add("model", std::string("chakra trace"));
  report.add("experiment", exp.name());
  report.add("trace folder", exp.chakra_trace().folder());
  report.add("cluster", exp.cluster().name());
  report.add("gpu", gpu_type_of(exp));
  report.add("trace ranks", static_cast<std::uint64_t>(program->ranks()));
  report.add("cluster gpus", std::uint64_t{params.nodes} * params.gpus_per_node);
  report.add("sync", std::string(to_string(config.sync)));
  report.add("makespan seconds", makespan_s, 9);
  report.add("recorded compute seconds max", static_cast<double>(longest_compute_ps) / ps, 9);
  report.add("compute seconds", compute_s, 9);
  report.add("compute seconds min", static_cast<double>(main.min_busy_ps) / ps, 9);
  report.add("compute seconds max", static_cast<double>(main.max_busy_ps) / ps, 9);
  report.add("blocked on collective seconds", collective_s, 9);
  report.add("blocked on p2p seconds", p2p_s, 9);
  report.add("exposed communication seconds", std::max(0.0, makespan_s - compute_s), 9);
  report.add("compute fraction", makespan_s > 0 ? compute_s / makespan_s : 0.0, 4);
  report.add("trace nodes", counts.nodes);
  report.add("replayed compute nodes", counts.compute);
  report.add("modeled compute nodes", counts.compute_modeled);
  report.add("replayed collectives", counts.collectives);
  report.add("replayed sends", counts.sends);
  report.add("replayed receives", counts.recvs);
  report.add("skipped cpu nodes", counts.skipped_cpu);
  report.add("skipped metadata and memory nodes", counts.skipped_other);
  report.add("skipped empty compute nodes", counts.skipped_empty);
  report.add("skipped unsupported collectives", counts.skipped_collectives);
  report.add("skipped p2p nodes without a peer", counts.skipped_p2p);
  report.add("dangling control deps", counts.dangling_ctrl_deps);
  report.add("traces ordered by data deps only", counts.ctrl_deps_ignored);
  report.add("network bytes per gpu", static_cast<double>(main.sum_bytes_sent) / world, 0);
  report.add("ranks", static_cast<std::uint64_t>(main.run.ranks));
  report.add("partition", partition_label(settings.options.partition, request.partition_map));
  report.add("lps", main.lps);
  add_engine_report(report, main.run);
  report.add("state digest", hex_digest(main.run.state_digest));
  if (output) output->write(&report, comm);
  return outcome;
}

}  // namespace warpsim::experiment
