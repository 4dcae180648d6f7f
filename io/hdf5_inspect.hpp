// Reading a warpsim series file (docs/hdf5-layout.md) for `warpsim inspect`: the dataset listing with shapes
// and units, the /summary values, and the hottest components of one metric. Serial HDF5; one process.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace warpsim::io {

// Prints every group and dataset (shape, type, unit) and the /meta attributes. Throws std::invalid_argument
// when `path` is not a readable HDF5 file.
void describe_series_file(const std::string& path, std::ostream& out);

// Prints /summary as `name: value unit` lines.
void print_summary(const std::string& path, std::ostream& out);

struct ComponentScore {
  std::uint64_t id = 0;
  std::string name;
  double score = 0;  // row sum (sum metrics), row max (max), row mean (time_average)
};

// The `top` components of /series/<metric> (metric = "kind/name") by score, highest first (ties: lower id).
// Throws std::invalid_argument naming the metric when it does not exist.
std::vector<ComponentScore> hottest_components(const std::string& path, const std::string& metric,
                                               std::size_t top, std::string* aggregation = nullptr,
                                               std::string* unit = nullptr);

// The series kinds and each kind's metric names, as "kind/metric".
std::vector<std::string> list_metrics(const std::string& path);

}  // namespace warpsim::io
