// Validation-row variants (see row_variants.hpp).
#include "experiment/validation/row_variants.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "experiment/spec/experiment_spec.hpp"
#include "experiment/spec/job_spec.hpp"

namespace warpsim::experiment::validation {

spec::ExperimentSpec dp_replica(const spec::ExperimentSpec& exp) {
  spec::ExperimentSpec r = exp;
  spec::JobSpec& job = *r.mutable_job();
  const std::uint64_t dp = std::max<std::uint32_t>(1, job.parallelism().data_parallel());
  if (job.parallelism().expert_parallel() > 1) {
    throw std::invalid_argument(
        "experiment spec: validation.reduction.dp_replica: not with expert parallelism (it is carved out of "
        "the data-parallel dimension)");
  }
  const std::uint64_t world = spec::world_size(job);
  job.mutable_parallelism()->set_data_parallel(1);
  if (job.world_size_gpus() != 0) job.set_world_size_gpus(world / dp);
  job.mutable_training()->set_global_batch_sequences(job.training().global_batch_sequences() / dp);
  // One replica alone has no data-parallel group to shard ZeRO state over, so its memory estimate is not
  // the row's: the row itself is checked against the HBM (run --check), the replica is a timing device.
  job.mutable_training()->set_allow_hbm_overflow(true);
  const std::uint64_t per_node = std::max<std::uint32_t>(1, r.cluster().scale_up().gpus_per_node());
  r.mutable_cluster()->set_nodes(static_cast<std::uint32_t>((world / dp + per_node - 1) / per_node));
  r.set_name(exp.name() + "/dp-replica");
  return spec::validated(std::move(r));
}

spec::ExperimentSpec with_microbatches(const spec::ExperimentSpec& exp, std::uint64_t microbatches) {
  spec::ExperimentSpec r = exp;
  spec::JobSpec& job = *r.mutable_job();
  const std::uint64_t dp = std::max<std::uint32_t>(1, job.parallelism().data_parallel());
  const std::uint64_t mbs = std::max<std::uint32_t>(1, job.training().micro_batch_sequences());
  job.mutable_training()->set_global_batch_sequences(microbatches * mbs * dp);
  r.set_name(exp.name() + "/m" + std::to_string(microbatches));
  return spec::validated(std::move(r));
}

}  // namespace warpsim::experiment::validation
