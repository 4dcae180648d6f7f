// The stable `key: value` block that every subcommand prints at the end of a run. Scripts and tests parse
// it, so keys never change meaning; new keys may be added.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace warpsim::io {

class KeyValueReport {
 public:
  struct Row {
    std::string key;
    std::string text;
    std::optional<double> number;  // the unrounded value of numeric rows (for the HDF5 /summary)
  };
  void add(std::string key, std::string value) { rows_.push_back({std::move(key), std::move(value), {}}); }
  void add(std::string key, std::uint64_t value) {
    rows_.push_back({std::move(key), std::to_string(value), static_cast<double>(value)});
  }
  void add(std::string key, double value, int precision);
  void print(std::ostream& out) const;
  const std::vector<Row>& rows() const { return rows_; }

 private:
  std::vector<Row> rows_;
};

}  // namespace warpsim::io
