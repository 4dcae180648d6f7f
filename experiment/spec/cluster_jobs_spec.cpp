// Resolution and field checks of ExperimentSpec.jobs (see cluster_jobs_spec.hpp).
#include "experiment/spec/cluster_jobs_spec.hpp"

#include <cmath>
#include <set>
#include <stdexcept>

#include "experiment/spec/job_spec.hpp"

namespace warpsim::spec {

namespace {

[[noreturn]] void fail(const std::string& field, const std::string& message) {
  throw std::invalid_argument("experiment spec: " + field + ": " + message);
}

std::string field(int i, const std::string& name) {
  return "jobs[" + std::to_string(i) + "]." + name;
}

}  // namespace

bool known_placement(const std::string& policy) {
  return policy == "packed" || policy == "spread" || policy == "topology" || policy == "explicit";
}

void resolve_cluster_jobs(ExperimentSpec& spec, const std::filesystem::path& base) {
  for (int i = 0; i < spec.jobs_size(); ++i) {
    ClusterJob& j = *spec.mutable_jobs(i);
    if (j.job_source_case() != ClusterJob::kJobFile) continue;
    const std::filesystem::path p(j.job_file());
    const std::string file = p.is_absolute() ? j.job_file() : (base / p).string();
    try {
      *j.mutable_job() = load_job_spec(file);
    } catch (const std::invalid_argument& e) {
      fail(field(i, "job_file"), e.what());
    }
  }
}

void validate_cluster_jobs(ExperimentSpec& spec) {
  if (spec.job_source_case() != ExperimentSpec::JOB_SOURCE_NOT_SET)
    fail("jobs", "cannot be set with job, job_file or chakra_trace (the jobs list holds every job)");
  if (spec.cluster().node_group_size() > 0)
    fail("cluster.node_group", "not supported with jobs (every GPU of a shared cluster is one type)");
  if (spec.has_cost()) fail("cost", "not supported with jobs (the economics model prices one job)");
  if (spec.has_reliability()) fail("reliability", "not supported with jobs");
  const std::uint64_t cluster_gpus =
      std::uint64_t{spec.cluster().nodes()} * spec.cluster().scale_up().gpus_per_node();
  std::set<std::string> names;
  for (int i = 0; i < spec.jobs_size(); ++i) {
    ClusterJob& j = *spec.mutable_jobs(i);
    if (j.name().empty()) fail(field(i, "name"), "required (names the job's results)");
    if (j.name().find_first_of("/ \t") != std::string::npos)
      fail(field(i, "name"), "'" + j.name() + "' must not hold '/' or spaces (it names an HDF5 group)");
    if (!names.insert(j.name()).second) fail(field(i, "name"), "'" + j.name() + "' is given twice");
    if (j.job_source_case() != ClusterJob::kJob) fail(field(i, "job"), "required (job or job_file)");
    try {
      JobSpec normalized_job = normalized(j.job());
      validate_job_spec(normalized_job);
      *j.mutable_job() = std::move(normalized_job);
    } catch (const std::invalid_argument& e) {
      fail(field(i, "job"), e.what());
    }
    if (!spec.cluster_gpu_type().empty() && spec.cluster_gpu_type() != j.job().gpu_type()) {
      fail(field(i, "job.gpu_type"), "'" + j.job().gpu_type() + "' but the cluster has '" +
                                         spec.cluster_gpu_type() + "' GPUs (cluster_gpu_type)");
    }
    if (!(j.start_time_s() >= 0) || !std::isfinite(j.start_time_s()) || j.start_time_s() > 1e6)
      fail(field(i, "start_time_s"), "must be in [0, 1e6] seconds");
    if (j.placement().empty()) j.set_placement("packed");
    if (!known_placement(j.placement())) {
      fail(field(i, "placement"),
           "must be packed, spread, topology or explicit (got '" + j.placement() + "')");
    }
    const std::uint64_t world = world_size(j.job());
    if (world > cluster_gpus) {
      fail(field(i, "job.world_size_gpus"), "the job needs " + std::to_string(world) +
                                                " GPUs but the cluster has " + std::to_string(cluster_gpus));
    }
    if (j.placement() == "explicit") {
      if (static_cast<std::uint64_t>(j.gpus_size()) != world) {
        fail(field(i, "gpus"), std::to_string(j.gpus_size()) + " GPUs listed for a job of " +
                                   std::to_string(world) + " ranks (one per rank)");
      }
      std::set<std::uint32_t> seen;
      for (int r = 0; r < j.gpus_size(); ++r) {
        if (j.gpus(r) >= cluster_gpus) {
          fail(field(i, "gpus"), "rank " + std::to_string(r) + " -> GPU " + std::to_string(j.gpus(r)) +
                                     ", but the cluster has " + std::to_string(cluster_gpus) + " GPUs");
        }
        if (!seen.insert(j.gpus(r)).second)
          fail(field(i, "gpus"), "GPU " + std::to_string(j.gpus(r)) + " is listed twice");
      }
    } else if (j.gpus_size() > 0) {
      fail(field(i, "gpus"), "only with placement \"explicit\" (got placement '" + j.placement() + "')");
    }
  }
}

}  // namespace warpsim::spec
