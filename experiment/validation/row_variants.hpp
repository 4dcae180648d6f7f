// The experiment variants a validation row's reduction simulates instead of the whole job
// (validation.proto's ValidationReduction): one data-parallel replica, and the job with fewer micro-batches
// per pipeline. Pure spec transforms, so that tests can check them without simulating.
#pragma once

#include <cstdint>

#include "experiment/spec/experiment.pb.h"

namespace warpsim::experiment::validation {

// One data-parallel replica of `exp`: data_parallel = 1, the replica's share of the global batch (the same
// micro-batches per pipeline), on the first ceil(world / DP / gpus_per_node) nodes. The result is validated.
// Throws std::invalid_argument when the job has expert parallelism (carved out of DP: no replica exists).
spec::ExperimentSpec dp_replica(const spec::ExperimentSpec& exp);

// `exp` with `microbatches` micro-batches per pipeline (global batch = m x micro-batch x DP); validated.
spec::ExperimentSpec with_microbatches(const spec::ExperimentSpec& exp, std::uint64_t microbatches);

}  // namespace warpsim::experiment::validation
