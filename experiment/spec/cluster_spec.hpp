// Loading and validating ClusterSpec (experiment/spec/cluster.proto): protobuf text format or JSON in, a
// validated spec or a std::invalid_argument naming the offending field out, plus the conversion into the
// cluster model's plain parameters.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "experiment/spec/cluster.pb.h"
#include "models/cluster/cluster_params.hpp"
#include "models/workload/job_params.hpp"

namespace warpsim::spec {

// Parses text format, or JSON when the first non-blank character is '{'. `origin` names the source in
// errors. Unknown fields are errors. Does not validate.
ClusterSpec parse_cluster_spec(std::string_view text, std::string_view origin);
// Reads and parses a file (see parse_cluster_spec).
ClusterSpec load_cluster_spec(const std::string& path);
// Fills documented defaults (network, nic) and checks every field; throws std::invalid_argument whose
// message starts with the field path, e.g. "fat_tree.links[1].bandwidth_gbps: must be > 0".
ClusterSpec validated(ClusterSpec spec);
// Validates and converts to engine units.
cluster::ClusterParams to_cluster_params(const ClusterSpec& spec);
// The GPU types of job ranks 0 .. world-1 from a validated spec's node groups (job rank r runs on cluster
// GPU r), for workload::JobParams::rank_gpu_types; empty without node groups.
std::vector<workload::RankGpuRange> rank_gpu_types(const ClusterSpec& spec, std::uint64_t world);

}  // namespace warpsim::spec
