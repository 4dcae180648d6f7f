// `warpsim partition` without the command line: the LP -> rank map a `warpsim run` of an experiment would use
// for a rank count, and its quality on the job's expected traffic: edge cut (fraction of the expected
// message weight, events per step, that crosses ranks), load imbalance (max rank weight / mean) and what
// each rank holds. Optionally saves the map for `warpsim run --partition-map`.
#pragma once

#include <string>

#include "io/key_value_report.hpp"

namespace warpsim::experiment {

struct PartitionRequest {
  std::string spec_path;
  int ranks = 0;
  std::string strategy = "topology";
  std::string granularity = "auto";  // auto | lp | node | group
  std::string write_map;             // map file to write (rank 0), empty = none
};

// Every rank computes the same map; rank 0 writes the map file and gets the report (the others an empty
// one). Throws SettingError naming the flag for a bad request.
io::KeyValueReport partition_report(const PartitionRequest& request, int rank);

}  // namespace warpsim::experiment
