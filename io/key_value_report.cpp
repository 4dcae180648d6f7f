// Key/value report printing (see key_value_report.hpp).
#include "io/key_value_report.hpp"

#include <cstdio>

namespace warpsim::io {

void KeyValueReport::add(std::string key, double value, int precision) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", precision, value);
  rows_.push_back({std::move(key), std::string(buffer), value});
}

void KeyValueReport::print(std::ostream& out) const {
  for (const Row& row : rows_) out << row.key << ": " << row.text << '\n';
  out.flush();
}

}  // namespace warpsim::io
