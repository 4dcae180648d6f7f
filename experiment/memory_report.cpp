// Memory estimate report rows (see memory_report.hpp).
#include "experiment/memory_report.hpp"

#include <cstdint>

#include "models/workload/memory_estimate.hpp"

namespace warpsim::experiment {

void add_memory_report(io::KeyValueReport& report, const workload::Job& job) {
  const workload::MemoryEstimate m = workload::estimate_memory(job);
  const workload::StageMemory& p = m.peak();
  report.add("memory peak stage", std::uint64_t{m.peak_stage});
  report.add("parameter memory bytes per gpu", p.parameter_bytes(), 0);
  report.add("activation memory bytes per gpu", p.activation_bytes, 0);
  report.add("peak memory bytes per gpu", p.total_bytes(), 0);
  report.add("hbm bytes per gpu", m.hbm_bytes, 0);
}

}  // namespace warpsim::experiment
