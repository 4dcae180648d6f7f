// The `jobs` of an ExperimentSpec (several training jobs sharing one cluster, docs/shared-clusters.md):
// their job files resolved and each entry checked field by field. Whether the placements fit together (free
// GPUs, overlaps) needs the cluster's topology and is checked where the jobs are placed
// (experiment/job_placement.hpp). Errors are std::invalid_argument naming the field ("jobs[1].placement").
#pragma once

#include <filesystem>
#include <string>

#include "experiment/spec/experiment.pb.h"

namespace warpsim::spec {

// The placement policies ClusterJob.placement names ("" is normalized to "packed").
bool known_placement(const std::string& policy);

// Replaces each jobs[i].job_file by the job it names (relative to `base`, the experiment file's folder).
void resolve_cluster_jobs(ExperimentSpec& spec, const std::filesystem::path& base);
// Normalizes and validates every jobs[i] of an experiment whose cluster is validated already.
void validate_cluster_jobs(ExperimentSpec& spec);

}  // namespace warpsim::spec
