// CSV parsing and lookup of measured op times (see measured_table.hpp).
#include "models/workload/measured_table.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace warpsim::workload {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= line.size(); ++i) {
    if (i == line.size() || line[i] == ',') {
      out.push_back(trim(line.substr(start, i - start)));
      start = i + 1;
    }
  }
  return out;
}

}  // namespace

MeasuredTable MeasuredTable::parse(std::string_view csv, std::string_view source) {
  MeasuredTable table;
  bool header_seen = false;
  std::size_t line_no = 0;
  while (!csv.empty()) {
    const auto nl = csv.find('\n');
    std::string_view line = trim(csv.substr(0, nl));
    csv = nl == std::string_view::npos ? std::string_view{} : csv.substr(nl + 1);
    ++line_no;
    const auto where = std::string(source) + ":" + std::to_string(line_no) + ": ";
    if (line.empty() || line.front() == '#') continue;
    const auto cols = split(line);
    if (!header_seen) {
      if (cols.size() != 3 || cols[0] != "op" || cols[1] != "flops" || cols[2] != "time_us") {
        throw std::invalid_argument(where + "expected the header 'op,flops,time_us'");
      }
      header_seen = true;
      continue;
    }
    if (cols.size() != 3) {
      throw std::invalid_argument(where + "expected 3 columns (op,flops,time_us), got " +
                                  std::to_string(cols.size()));
    }
    if (cols[0].empty()) throw std::invalid_argument(where + "op: empty name");
    double time_us = 0;
    const auto t = std::from_chars(cols[2].data(), cols[2].data() + cols[2].size(), time_us);
    if (t.ec != std::errc{} || t.ptr != cols[2].data() + cols[2].size() || !(time_us >= 0) ||
        !std::isfinite(time_us)) {
      throw std::invalid_argument(where + "time_us: '" + std::string(cols[2]) + "' is not a number >= 0");
    }
    const double seconds = time_us * 1e-6;
    if (cols[1] == "*") {
      if (!table.any_.emplace(std::string(cols[0]), seconds).second) {
        throw std::invalid_argument(where + "duplicate row for op '" + std::string(cols[0]) + "', flops *");
      }
      continue;
    }
    std::uint64_t flops = 0;
    const auto f = std::from_chars(cols[1].data(), cols[1].data() + cols[1].size(), flops);
    if (f.ec != std::errc{} || f.ptr != cols[1].data() + cols[1].size()) {
      throw std::invalid_argument(where + "flops: '" + std::string(cols[1]) +
                                  "' is not a non-negative integer or '*'");
    }
    if (!table.exact_.emplace(std::pair{std::string(cols[0]), flops}, seconds).second) {
      throw std::invalid_argument(where + "duplicate row for op '" + std::string(cols[0]) + "', flops " +
                                  std::string(cols[1]));
    }
  }
  if (!header_seen) throw std::invalid_argument(std::string(source) + ": empty table (no header line)");
  return table;
}

MeasuredTable MeasuredTable::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument("measured table: cannot read '" + path + "'");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return parse(buffer.str(), path);
}

std::optional<double> MeasuredTable::lookup(std::string_view op, double flops) const {
  if (!exact_.empty() && flops >= 0) {
    const auto key = std::pair{std::string(op), static_cast<std::uint64_t>(std::llround(flops))};
    if (auto it = exact_.find(key); it != exact_.end()) return it->second;
  }
  if (auto it = any_.find(op); it != any_.end()) return it->second;
  return std::nullopt;
}

}  // namespace warpsim::workload
