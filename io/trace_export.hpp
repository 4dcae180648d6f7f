// Chrome / Perfetto trace-event JSON export of a warpsim series file: one counter track per selected
// component (and per metric), one point per sample, so that ui.perfetto.dev or chrome://tracing shows the
// components' activity over simulated time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace warpsim::io {

struct TraceSelection {
  std::vector<std::string> kinds;         // empty = every kind
  std::vector<std::uint64_t> components;  // global component ids within each kind; empty = all (capped)
  std::size_t max_components = 64;        // cap when `components` is empty: a trace of 10^5 tracks is useless
};

// Writes the trace to json_path (via a temporary name). Returns the number of counter events written.
// Throws std::invalid_argument for an unknown kind, an id out of range, or an unwritable output.
std::uint64_t export_trace(const std::string& h5_path, const std::string& json_path,
                           const TraceSelection& sel);

// Parses "0-15,20,31-33" into ids; throws std::invalid_argument naming `flag` on bad syntax.
std::vector<std::uint64_t> parse_id_ranges(const std::string& text, const std::string& flag);

}  // namespace warpsim::io
