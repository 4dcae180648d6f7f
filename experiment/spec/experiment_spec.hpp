// Loading and validating ExperimentSpec (experiment/spec/experiment.proto): text format or JSON in; the
// cluster and job resolved (inline or from files relative to the experiment file), each validated by its own
// loader, then checked against each other. Errors are std::invalid_argument naming the field.
#pragma once

#include <string>
#include <string_view>

#include "experiment/spec/experiment.pb.h"

namespace warpsim::spec {

// Parses text format or JSON (spec_text.hpp's rule). Does not resolve or validate.
ExperimentSpec parse_experiment_spec(std::string_view text, std::string_view origin);
// Reads a file, resolves cluster_file/job_file into inline messages (relative paths are taken from the
// experiment file's folder), normalizes defaults and validates everything.
ExperimentSpec load_experiment_spec(const std::string& path);
// The job of a file that is a job spec or an experiment spec (then loaded and validated whole, the job
// returned), for commands that need only the job (`warpsim estimate`). Normalized and validated. With
// `cluster`, an experiment spec's validated cluster is stored there (a job spec leaves it untouched).
JobSpec load_job_of_spec(const std::string& path, ClusterSpec* cluster = nullptr);
// The cluster of a file that is a cluster spec or an experiment spec (its cluster or cluster_file), for
// `warpsim collective --cluster`. Parsed, not validated (like load_cluster_spec).
ClusterSpec load_cluster_of_spec(const std::string& path);
// Validates an experiment whose cluster and job are inline; fills simulation defaults.
ExperimentSpec validated(ExperimentSpec spec);

}  // namespace warpsim::spec
