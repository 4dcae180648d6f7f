// The stable `key: value` block that every subcommand prints at the end of a run. Scripts and tests parse
// it, so keys never change meaning; new keys may be added.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace warpsim::io {

class KeyValueReport {
 public:
  void add(std::string key, std::string value) { rows_.emplace_back(std::move(key), std::move(value)); }
  void add(std::string key, std::uint64_t value) { add(std::move(key), std::to_string(value)); }
  void add(std::string key, double value, int precision);
  void print(std::ostream& out) const;

 private:
  std::vector<std::pair<std::string, std::string>> rows_;
};

}  // namespace warpsim::io
