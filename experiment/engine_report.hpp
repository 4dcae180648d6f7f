// The engine keys of every simulating command's `key: value` report, from the engine's RunResult.
#pragma once

#include "engine/kernel/engine.hpp"
#include "io/key_value_report.hpp"

namespace warpsim::experiment {

// Adds: events committed, events processed, events rolled back, efficiency (ROSS's definition:
// 100 x (1 - rolled back / committed)), rollbacks (episodes), remote events and remote event fraction
// (committed events that came from another rank), event rate, wall seconds, peak rss bytes, peak rss bytes
// total.
void add_engine_report(io::KeyValueReport& report, const RunResult& result);

}  // namespace warpsim::experiment
