// Network fidelity of an experiment: the one parser of its name ("packet" | "flow") and the one rule that
// resolves the two spec fields that can set it (simulation.fidelity, per experiment, and
// cluster.network.fidelity, per cluster file) plus a command-line flag. Header-only so that the spec loader
// (experiment/spec/) applies the same rule without a library cycle.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "models/cluster/cluster_params.hpp"

namespace warpsim::experiment {

// The names, for error messages.
inline constexpr std::string_view kFidelityNames = "packet, flow";

inline std::optional<cluster::Fidelity> parse_fidelity(std::string_view name) {
  if (name == "packet") return cluster::Fidelity::kPacket;
  if (name == "flow") return cluster::Fidelity::kFlow;
  return std::nullopt;
}

inline std::string_view to_string(cluster::Fidelity fidelity) {
  return fidelity == cluster::Fidelity::kFlow ? "flow" : "packet";
}

// "unknown fidelity 'X' (known: packet, flow)", or nothing for a known (or empty = unset) name.
inline std::optional<std::string> fidelity_error(std::string_view name) {
  if (name.empty() || parse_fidelity(name)) return std::nullopt;
  return "unknown fidelity '" + std::string(name) + "' (known: " + std::string(kFidelityNames) + ")";
}

// The outcome of the rule: the fidelity, or the field to blame and why.
struct FidelityChoice {
  cluster::Fidelity fidelity = cluster::Fidelity::kPacket;
  std::string error_field;  // empty when resolved
  std::string error;
};

// flag > simulation.fidelity > cluster.network.fidelity > packet. The two spec fields describe one thing,
// so when both are set they must agree (a flag may still override both). Empty strings are unset.
inline FidelityChoice resolve_fidelity(std::string_view flag, std::string_view simulation_field,
                                       std::string_view network_field,
                                       std::string_view flag_name = "--fidelity") {
  FidelityChoice out;
  const auto blame = [&out](std::string_view field, std::string why) {
    out.error_field = field;
    out.error = std::move(why);
    return out;
  };
  if (auto e = fidelity_error(flag)) return blame(flag_name, *e);
  if (auto e = fidelity_error(simulation_field)) return blame("simulation.fidelity", *e);
  if (auto e = fidelity_error(network_field)) return blame("cluster.network.fidelity", *e);
  if (!simulation_field.empty() && !network_field.empty() && simulation_field != network_field) {
    // Appended piecewise: GCC 12 warns (-Wrestrict, a false positive) on the operator+ chain here.
    std::string why = "'";
    why.append(simulation_field).append("' disagrees with cluster.network.fidelity '");
    why.append(network_field).append("'");
    return blame("simulation.fidelity", std::move(why));
  }
  const std::string_view chosen = !flag.empty()               ? flag
                                  : !simulation_field.empty() ? simulation_field
                                  : !network_field.empty()    ? network_field
                                                              : std::string_view("packet");
  out.fidelity = *parse_fidelity(chosen);
  return out;
}

}  // namespace warpsim::experiment
