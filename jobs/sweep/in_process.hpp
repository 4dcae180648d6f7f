// Experimental: several experiments simulated by one engine instance in this process (CompositeModel),
// instead of one child process each. Only the training step itself is simulated (no --attribute, no HDF5
// file, no economics/reliability post-processing), so a result holds fewer keys than `warpsim run` prints.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "experiment/spec/experiment.pb.h"

namespace warpsim::sweep {

// Simulates `experiments` (validated specs) together, sequential sync on this rank alone. Returns one
// `key: value` map per experiment: experiment, gpus, steps, step seconds, lps, wall seconds (the batch's
// wall time divided by its size), mode.
std::vector<std::map<std::string, std::string>> run_in_process(
    const std::vector<spec::ExperimentSpec>& experiments, std::uint64_t seed);

}  // namespace warpsim::sweep
