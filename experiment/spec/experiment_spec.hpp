// Loading and validating ExperimentSpec (experiment/spec/experiment.proto): text format or JSON in; the cluster
// and job resolved (inline or from files relative to the experiment file), each validated by its own
// loader, then checked against each other. Errors are std::invalid_argument naming the field.
#pragma once

#include <string>
#include <string_view>

#include "experiment/spec/experiment.pb.h"

namespace warpsim::spec {

// Parses text format, or JSON when the first non-blank character is '{'. Does not resolve or validate.
ExperimentSpec parse_experiment_spec(std::string_view text, std::string_view origin);
// Reads a file, resolves cluster_file/job_file into inline messages (relative paths are taken from the
// experiment file's folder), normalizes defaults and validates everything.
ExperimentSpec load_experiment_spec(const std::string& path);
// Validates an experiment whose cluster and job are inline; fills simulation defaults.
ExperimentSpec validated(ExperimentSpec spec);

}  // namespace warpsim::spec
