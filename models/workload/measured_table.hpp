// Measured op-time table (CSV) that overrides the compute model per op.
//
// Format: a header line "op,flops,time_us", then one row per measurement. `op` is the op name the workload
// emits (docs/workload.md lists them), `flops` is the op's FLOP count (an integer, matched exactly after
// rounding) or "*" for any size, `time_us` the measured time in microseconds. Blank lines and lines starting
// with '#' are ignored. Exact-size rows win over "*" rows.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace warpsim::workload {

class MeasuredTable {
 public:
  // Throws std::invalid_argument "source:line: ..." for malformed rows.
  static MeasuredTable parse(std::string_view csv, std::string_view source = "<table>");
  static MeasuredTable load(const std::string& path);

  // Measured seconds for this op, or nothing when the table has no row for it.
  std::optional<double> lookup(std::string_view op, double flops) const;
  std::size_t size() const { return exact_.size() + any_.size(); }

 private:
  std::map<std::pair<std::string, std::uint64_t>, double, std::less<>> exact_;
  std::map<std::string, double, std::less<>> any_;
};

}  // namespace warpsim::workload
