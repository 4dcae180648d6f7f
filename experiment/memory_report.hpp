// The per-GPU memory estimate (models/workload/memory_estimate.hpp) as `key: value` report rows, shared by
// `warpsim estimate` and the `warpsim run` summary so both name the figures the same way.
#pragma once

#include "io/key_value_report.hpp"
#include "models/workload/job.hpp"

namespace warpsim::experiment {

// Adds, for the pipeline stage with the largest total: the stage, parameter memory (weights + gradients +
// optimizer state), activation memory, their sum, and the GPU's HBM capacity, all in bytes per GPU.
void add_memory_report(io::KeyValueReport& report, const workload::Job& job);

}  // namespace warpsim::experiment
