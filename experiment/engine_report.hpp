// The engine keys of every simulating command's `key: value` report, from the engine's RunResult.
#pragma once

#include <cstdint>
#include <string>

#include "engine/kernel/engine.hpp"
#include "io/key_value_report.hpp"

namespace warpsim::experiment {

// Adds: events committed, events processed, events rolled back, efficiency (ROSS's definition:
// 100 x (1 - rolled back / committed)), rollbacks (episodes), remote events and remote event fraction
// (committed events that came from another rank), event rate, wall seconds, peak rss bytes, peak rss bytes
// total.
void add_engine_report(io::KeyValueReport& report, const RunResult& result);
// A 64-bit digest or hash as the report prints it: 16 lowercase hex digits.
std::string hex_digest(std::uint64_t v);

}  // namespace warpsim::experiment
