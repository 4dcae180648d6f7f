// The engine keys of a run report (see engine_report.hpp).
#include "experiment/engine_report.hpp"

#include <cstdio>

namespace warpsim::experiment {

void add_engine_report(io::KeyValueReport& report, const RunResult& result) {
  const EngineStats& t = result.total;
  report.add("events committed", t.committed);
  report.add("events processed", t.processed);
  report.add("events rolled back", t.rolled_back);
  const double efficiency =
      t.committed == 0
          ? 100.0
          : 100.0 * (1.0 - static_cast<double>(t.rolled_back) / static_cast<double>(t.committed));
  report.add("efficiency", efficiency, 2);
  report.add("rollbacks", t.rollbacks);
  // Committed events that crossed ranks: what the partition costs (0 on one rank).
  report.add("remote events", t.committed_remote);
  report.add(
      "remote event fraction",
      t.committed == 0 ? 0.0 : static_cast<double>(t.committed_remote) / static_cast<double>(t.committed), 4);
  // A resumed run's wall time is its own, so only the events it committed itself count for its rate.
  const double rate = result.wall_seconds > 0
                          ? static_cast<double>(t.committed - result.resumed_committed) / result.wall_seconds
                          : 0.0;
  report.add("event rate", rate, 0);
  report.add("wall seconds", result.wall_seconds, 3);
  report.add("peak rss bytes", result.peak_rss_bytes_max);
  report.add("peak rss bytes total", result.peak_rss_bytes_sum);
  if (result.memory_budget_bytes != 0) {
    report.add("memory budget bytes per rank", result.memory_budget_bytes);
    report.add("memory budget met",
               std::string(result.peak_rss_bytes_max <= result.memory_budget_bytes ? "yes" : "no"));
    report.add("memory budget limit cuts", result.total.memory_cuts);
  }
  // CPU time / wall time of the rank that got least of a CPU: well below 1 on a shared node.
  report.add("cpu share min", result.cpu_share_min, 3);
}

std::string hex_digest(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace warpsim::experiment
