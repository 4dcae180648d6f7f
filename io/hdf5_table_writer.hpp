// Appends a table (a group of equally long 1-D datasets, one per column) to an HDF5 file that is already
// written and closed, from one process with the plain POSIX driver. For results that are small and live on
// one rank after a gather, with their own time axis, so they do not fit the fixed-grid /series (e.g. the
// committed events of the resilience simulation, docs/hdf5-layout.md "Failures simulated inside the run").
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace warpsim::io {

struct TableColumn {
  std::string name;
  std::string unit;  // "" for indices and codes
  std::string description;
  std::variant<std::vector<double>, std::vector<std::int64_t>> values;
};

// Creates group `group` (parents as needed; it must not exist) in file `path` with one dataset per column
// and the text attributes `attributes` on the group. Throws std::runtime_error on an HDF5 failure or when
// the columns differ in length.
void append_table(const std::string& path, const std::string& group, const std::vector<TableColumn>& columns,
                  const std::vector<std::pair<std::string, std::string>>& attributes = {});

}  // namespace warpsim::io
