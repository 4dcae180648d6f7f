// RowResult as `key: value` lines and back (see row_result.hpp).
#include "experiment/validation/row_result.hpp"

#include <map>
#include <sstream>
#include <stdexcept>

namespace warpsim::experiment::validation {

io::KeyValueReport to_report(const RowResult& r) {
  io::KeyValueReport k;
  k.add("set", r.set);
  k.add("row", r.row);
  k.add("name", r.name);
  k.add("config", r.config);
  k.add("source", r.source);
  k.add("reference", r.reference, 6);
  k.add("prediction", r.prediction, 6);
  k.add("step seconds", r.step_seconds, 9);
  k.add("reduction", r.reduction);
  k.add("simulations", std::uint64_t{r.simulations});
  k.add("events", r.events);
  k.add("wall seconds", r.wall_seconds, 3);
  if (r.failed()) k.add("error text", r.error_text);
  return k;
}

RowResult parse_row_result(std::string_view text) {
  std::map<std::string, std::string> kv;
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(": ");
    if (colon != std::string::npos) kv[line.substr(0, colon)] = line.substr(colon + 2);
  }
  auto get = [&](const std::string& key) -> const std::string& {
    const auto it = kv.find(key);
    if (it == kv.end()) throw std::runtime_error("validation row result: no '" + key + "' line");
    return it->second;
  };
  RowResult r;
  r.set = get("set");
  r.row = get("row");
  r.name = get("name");
  r.config = get("config");
  r.source = get("source");
  r.reference = std::stod(get("reference"));
  r.prediction = std::stod(get("prediction"));
  r.step_seconds = std::stod(get("step seconds"));
  r.reduction = get("reduction");
  r.simulations = static_cast<std::uint32_t>(std::stoul(get("simulations")));
  r.events = std::stoull(get("events"));
  r.wall_seconds = std::stod(get("wall seconds"));
  if (const auto it = kv.find("error text"); it != kv.end()) r.error_text = it->second;
  return r;
}

}  // namespace warpsim::experiment::validation
