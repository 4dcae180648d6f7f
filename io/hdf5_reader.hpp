// Small serial readers for warpsim series files, shared by the inspector and the trace export.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "io/hdf5_handle.hpp"

namespace warpsim::io {

// Opens read-only; throws std::invalid_argument when the file is missing or not HDF5.
h5::Handle open_series_file(const std::string& path);
// A string attribute (fixed or variable length), or "" when absent.
std::string read_text_attribute(hid_t object, const std::string& name);
// (name, value, unit) of every /summary dataset, in name order.
std::vector<std::tuple<std::string, double, std::string>> read_summary(hid_t file);
// "kind/metric" for every /series/<kind>/<metric> dataset.
std::vector<std::string> series_metrics(hid_t file);
// /series/time in picoseconds.
std::vector<std::uint64_t> read_sample_times(hid_t file);

struct SeriesDataset {
  h5::Handle dataset;
  std::string kind;
  std::string metric;
  std::uint64_t components = 0;
  std::uint64_t samples = 0;
};
// `metric` is "kind/name"; throws std::invalid_argument naming it when absent.
SeriesDataset open_series(hid_t file, const std::string& metric);
// Rows [first, first + rows) as a row-major [rows, samples] block.
std::vector<double> read_rows(const SeriesDataset& series, std::uint64_t first, std::uint64_t rows);
// /components/<kind>/name, or an empty vector when the kind has no names.
std::vector<std::string> component_names(hid_t file, const std::string& kind, std::uint64_t count);

}  // namespace warpsim::io
