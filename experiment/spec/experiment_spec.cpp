// ExperimentSpec loading, resolution and cross-checks (see experiment_spec.hpp).
#include "experiment/spec/experiment_spec.hpp"
#include "experiment/spec/spec_text.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "engine/kernel/engine_config.hpp"
#include "experiment/fidelity.hpp"
#include "experiment/spec/cluster_jobs_spec.hpp"
#include "experiment/spec/cluster_spec.hpp"
#include "experiment/spec/job_spec.hpp"

namespace warpsim::spec {

namespace {

[[noreturn]] void fail(const std::string& field, const std::string& message) {
  throw std::invalid_argument("experiment spec: " + field + ": " + message);
}

std::string resolve(const std::filesystem::path& base, const std::string& file) {
  const std::filesystem::path p(file);
  return p.is_absolute() ? file : (base / p).string();
}

// Re-labels a nested loader's error with the field it came from.
template <typename F>
auto nested(const std::string& field, F&& f) {
  try {
    return f();
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("experiment spec: " + field + ": " + e.what());
  }
}

// Where text-format parsing as `Message` first fails, as (line, column); (-1, -1) when it parses. Used to
// report, for a file that is neither kind of spec, the error of the kind that read further into it.
template <class Message>
std::pair<int, int> text_error_position(std::string_view text) {
  Message message;
  const auto error = parse_text_format(strip_bom(text), message);
  return error ? std::pair{error->line, error->column} : std::pair{-1, -1};
}

}  // namespace

ExperimentSpec parse_experiment_spec(std::string_view text, std::string_view origin) {
  ExperimentSpec spec;
  parse_text_or_json(text, spec, "experiment spec", origin);
  return spec;
}

namespace {

// Whether `text` parses as a message of type M (no validation).
template <typename M>
bool parses_as(std::string_view text) {
  M m;
  try {
    parse_text_or_json(text, m, "", "");
  } catch (const std::invalid_argument&) {
    return false;
  }
  return true;
}

// An experiment spec's text; a job or cluster spec given where an experiment spec is wanted gets a hint.
ExperimentSpec parse_experiment_file(const std::string& text, const std::string& path) {
  try {
    return parse_experiment_spec(text, path);
  } catch (const std::invalid_argument&) {
    if (parses_as<JobSpec>(text)) {
      fail("file", "'" + path + "' is a job spec; this command needs an experiment spec (cluster + job, or " +
                       "job_file: \"" + path + "\"; examples/*.textproto are experiment specs)");
    }
    if (parses_as<ClusterSpec>(text)) {
      fail("file", "'" + path +
                       "' is a cluster spec; this command needs an experiment spec (job + cluster, " +
                       "or cluster_file: \"" + path + "\"; examples/*.textproto are experiment specs)");
    }
    throw;
  }
}

}  // namespace

ExperimentSpec load_experiment_spec(const std::string& path) {
  ExperimentSpec spec = parse_experiment_file(read_spec_file(path, "experiment spec"), path);
  const std::filesystem::path base = std::filesystem::path(path).parent_path();
  if (spec.cluster_source_case() == ExperimentSpec::kClusterFile) {
    const std::string file = resolve(base, spec.cluster_file());
    *spec.mutable_cluster() = nested("cluster_file", [&] { return load_cluster_spec(file); });
  }
  if (spec.job_source_case() == ExperimentSpec::kJobFile) {
    const std::string file = resolve(base, spec.job_file());
    *spec.mutable_job() = nested("job_file", [&] { return load_job_spec(file); });
  }
  if (spec.job_source_case() == ExperimentSpec::kChakraTrace && !spec.chakra_trace().folder().empty()) {
    spec.mutable_chakra_trace()->set_folder(resolve(base, spec.chakra_trace().folder()));
  }
  resolve_cluster_jobs(spec, base);
  return validated(std::move(spec));
}

namespace {

// The parts of a trace replay the spec alone can check; the trace files are read by experiment/trace_run.
void validate_chakra_trace(const ExperimentSpec& spec) {
  const ChakraTraceSpec& c = spec.chakra_trace();
  if (c.folder().empty()) fail("chakra_trace.folder", "required (the folder of the per-rank .et files)");
  const std::uint64_t cluster_gpus =
      std::uint64_t{spec.cluster().nodes()} * spec.cluster().scale_up().gpus_per_node();
  for (int r = 0; r < c.rank_to_gpu_size(); ++r) {
    if (c.rank_to_gpu(r) >= cluster_gpus) {
      fail("chakra_trace.rank_to_gpu", "rank " + std::to_string(r) + " -> GPU " +
                                           std::to_string(c.rank_to_gpu(r)) + ", but the cluster has " +
                                           std::to_string(cluster_gpus) + " GPUs");
    }
  }
  for (const auto& pg : c.process_group()) {
    if (pg.name().empty()) fail("chakra_trace.process_group.name", "required");
    if (pg.ranks().empty()) fail("chakra_trace.process_group.ranks", "required (group '" + pg.name() + "')");
    std::vector<std::uint32_t> ranks(pg.ranks().begin(), pg.ranks().end());
    std::sort(ranks.begin(), ranks.end());
    const auto twice = std::adjacent_find(ranks.begin(), ranks.end());
    if (twice != ranks.end()) {
      fail("chakra_trace.process_group.ranks",
           "rank " + std::to_string(*twice) + " twice in group '" + pg.name() + "'");
    }
  }
  if (!c.gpu_type().empty() && !spec.cluster_gpu_type().empty() && c.gpu_type() != spec.cluster_gpu_type()) {
    fail("chakra_trace.gpu_type", "'" + c.gpu_type() + "' but the cluster has '" + spec.cluster_gpu_type() +
                                      "' GPUs (cluster_gpu_type)");
  }
  if (spec.cluster().node_group_size() > 0) {
    fail("cluster.node_group",
         "not supported with chakra_trace (a replay times its compute on one GPU type, "
         "chakra_trace.gpu_type)");
  }
  if (spec.has_cost()) fail("cost", "not supported with chakra_trace (the power model needs a training job)");
  if (spec.has_reliability()) fail("reliability", "not supported with chakra_trace");
  if (spec.simulation().steps() > 1)
    fail("simulation.steps",
         "a Chakra trace is replayed once (got " + std::to_string(spec.simulation().steps()) + ")");
}

}  // namespace

ExperimentSpec validated(ExperimentSpec spec) {
  if (spec.cluster_source_case() != ExperimentSpec::kCluster)
    fail("cluster", "required (cluster or cluster_file)");
  const bool trace = spec.job_source_case() == ExperimentSpec::kChakraTrace;
  const bool shared = spec.jobs_size() > 0;  // several jobs (cluster_jobs_spec.hpp)
  if (spec.job_source_case() != ExperimentSpec::kJob && !trace && !shared)
    fail("job", "required (job, job_file, chakra_trace or jobs)");
  // simulation.fidelity and cluster.network.fidelity name one thing: experiment/fidelity.hpp's rule picks
  // it, and both fields hold the result, so that whatever reads either sees the same.
  const experiment::FidelityChoice fidelity =
      experiment::resolve_fidelity({}, spec.simulation().fidelity(), spec.cluster().network().fidelity());
  if (!fidelity.error_field.empty()) fail(fidelity.error_field, fidelity.error);
  spec.mutable_simulation()->set_fidelity(std::string(experiment::to_string(fidelity.fidelity)));
  spec.mutable_cluster()->mutable_network()->set_fidelity(spec.simulation().fidelity());
  *spec.mutable_cluster() = nested("cluster", [&] { return spec::validated(spec.cluster()); });
  if (shared) {
    validate_cluster_jobs(spec);
  } else if (trace) {
    validate_chakra_trace(spec);
  } else {
    *spec.mutable_job() = nested("job", [&] {
      JobSpec j = normalized(spec.job());
      validate_job_spec(j);
      return j;
    });
  }
  auto& sim = *spec.mutable_simulation();
  if (sim.steps() == 0) sim.set_steps(1);
  if (sim.steps() > 1000) fail("simulation.steps", "at most 1000 (got " + std::to_string(sim.steps()) + ")");
  // The engine's parser (the one of --sync too).
  if (!sim.sync().empty() && !parse_sync_mode(sim.sync())) {
    fail("simulation.sync", "must be sequential, conservative or optimistic (got '" + sim.sync() + "')");
  }
  if (sim.end_time_s() == 0) sim.set_end_time_s(1e6);
  if (!(sim.end_time_s() > 0) || !std::isfinite(sim.end_time_s()) || sim.end_time_s() > 1e7) {
    fail("simulation.end_time_s", "must be in (0, 1e7] seconds");
  }
  if (trace || shared) return spec;
  const std::uint64_t cluster_gpus =
      std::uint64_t{spec.cluster().nodes()} * spec.cluster().scale_up().gpus_per_node();
  const std::uint64_t world = world_size(spec.job());
  if (world > cluster_gpus) {
    fail("job.world_size_gpus", "the job needs " + std::to_string(world) + " GPUs but the cluster has " +
                                    std::to_string(cluster_gpus));
  }
  if (const auto& groups = spec.cluster().node_group(); !groups.empty()) {
    // Node groups name each node's GPU type; the job's gpu_type is its reference profile (MFU, power) and
    // must be one of them.
    if (!spec.cluster_gpu_type().empty()) {
      fail("cluster_gpu_type", "cannot be set with cluster.node_group (each group names its GPU type)");
    }
    std::string types;
    bool found = false;
    for (const auto& g : groups) {
      found = found || g.gpu_type() == spec.job().gpu_type();
      if (types.find("'" + g.gpu_type() + "'") == std::string::npos)
        types += (types.empty() ? "'" : ", '") + g.gpu_type() + "'";
    }
    if (!found) {
      fail("job.gpu_type",
           "'" + spec.job().gpu_type() + "' is none of the cluster's node-group GPU types (" + types + ")");
    }
  }
  if (!spec.cluster_gpu_type().empty() && spec.cluster_gpu_type() != spec.job().gpu_type()) {
    fail("job.gpu_type", "'" + spec.job().gpu_type() + "' but the cluster has '" + spec.cluster_gpu_type() +
                             "' GPUs (cluster_gpu_type)");
  }
  return spec;
}

JobSpec load_job_of_spec(const std::string& path, ClusterSpec* cluster) {
  const std::string text = read_spec_file(path, "spec");
  if (parses_as<ExperimentSpec>(text)) {
    const ExperimentSpec probe = parse_experiment_spec(text, path);
    // A file that only has `name` parses as either; it is an experiment spec when it has a cluster or job.
    if (probe.cluster_source_case() != ExperimentSpec::CLUSTER_SOURCE_NOT_SET ||
        probe.job_source_case() != ExperimentSpec::JOB_SOURCE_NOT_SET || !parses_as<JobSpec>(text)) {
      const ExperimentSpec exp = load_experiment_spec(path);
      if (exp.job_source_case() == ExperimentSpec::kChakraTrace)
        fail("chakra_trace", "this command needs a training job; Chakra traces replay with `warpsim run`");
      if (exp.jobs_size() > 0)
        fail("jobs", "this command needs a single job; several jobs on one cluster run with `warpsim run`");
      if (cluster != nullptr) *cluster = exp.cluster();
      return exp.job();
    }
  }
  if (parses_as<JobSpec>(text)) return load_job_spec(path);
  // Neither: the error of the kind that read further into the file (a job spec with a bad value reads past
  // `model {`, where an experiment spec stops at once); on a tie or JSON, an experiment spec's.
  if (!looks_like_json(text) &&
      text_error_position<JobSpec>(text) > text_error_position<ExperimentSpec>(text)) {
    return load_job_spec(path);  // throws the job spec's error
  }
  try {
    parse_experiment_spec(text, path);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string(e.what()) + " (neither an experiment spec nor a job spec)");
  }
  return load_job_spec(path);  // not reached
}

ClusterSpec load_cluster_of_spec(const std::string& path) {
  const std::string text = read_spec_file(path, "cluster spec");
  if (!parses_as<ClusterSpec>(text) && parses_as<ExperimentSpec>(text)) {
    ExperimentSpec exp = parse_experiment_spec(text, path);
    switch (exp.cluster_source_case()) {
      case ExperimentSpec::kCluster:
        return exp.cluster();
      case ExperimentSpec::kClusterFile: {
        const std::string file = resolve(std::filesystem::path(path).parent_path(), exp.cluster_file());
        return nested("cluster_file", [&] { return load_cluster_spec(file); });
      }
      case ExperimentSpec::CLUSTER_SOURCE_NOT_SET:
        fail("cluster", "required in '" + path + "' (cluster or cluster_file)");
    }
  }
  return parse_cluster_spec(text, path);
}

}  // namespace warpsim::spec
