// Building a training experiment from its spec (see training_setup.hpp).
#include "experiment/training_setup.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "experiment/spec/cluster_spec.hpp"
#include "experiment/spec/job_spec.hpp"

namespace warpsim::experiment {

std::shared_ptr<const workload::Job> build_job(const spec::ExperimentSpec& exp) {
  if (exp.job_source_case() == spec::ExperimentSpec::kChakraTrace) {
    throw std::invalid_argument(
        "experiment spec: chakra_trace: this command needs a training job; Chakra traces replay with "
        "`warpsim run`");
  }
  if (exp.jobs_size() > 0) {
    throw std::invalid_argument(
        "experiment spec: jobs: this command needs a single job; several jobs on one cluster run with "
        "`warpsim run`");
  }
  // The GPU profile is checked by the workload model, which owns the profiles.
  try {
    workload::JobParams params = spec::to_job_params(exp.job());
    // Node groups of several GPU types: each rank's (rank r on cluster GPU r).
    params.rank_gpu_types = spec::rank_gpu_types(exp.cluster(), params.world_size_gpus());
    return std::make_shared<const workload::Job>(std::move(params));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("experiment spec: job: ") + e.what());
  }
}

std::shared_ptr<const training::TrainingProgram> TrainingSetup::program_without(std::uint32_t removed) const {
  return std::make_shared<const training::TrainingProgram>(
      job, steps, params.storage_targets, removed, params.gpus_per_node, cluster::nccl_fabric(params));
}

TrainingSetup build_training(const spec::ExperimentSpec& exp) {
  TrainingSetup s;
  s.params = spec::to_cluster_params(exp.cluster());
  s.job = build_job(exp);
  s.steps = std::max<std::uint32_t>(1, exp.simulation().steps());
  // GPUs per node: NCCL's rail-aligned rings, and one channel per rail bounds the CTAs the overlapped
  // gradient reduce takes.
  // The fabric's wire latency and bandwidths: NCCL's latency beyond the wire, and its protocol choice.
  s.program = std::make_shared<const training::TrainingProgram>(
      s.job, s.steps, s.params.storage_targets, 0, s.params.gpus_per_node, cluster::nccl_fabric(s.params));
  s.estimate = workload::estimate_step(s.job);
  return s;
}

}  // namespace warpsim::experiment
