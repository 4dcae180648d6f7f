// Power and energy as per-component time series of a results file: from a finished SeriesRecorder of the
// cluster model (the committed busy fractions and bytes on the sampling grid) and the run's power model,
// adds /series/<kind>/power_w (watts, the mean over each sample) and /components/<kind>/energy_j (joules,
// the integral of power_w over the grid) to the kinds "gpu", "nic", "switch_port" and "storage":
//   gpu          idle + (busy - idle) x busy fraction                 (series gpu/busy)
//   nic          static + J/byte x bytes transmitted / sample length  (series nic/tx_bytes)
//   switch_port  its switch's static / the switch's ports + J/byte x bytes / sample length; NVSwitch (tier
//                0) or network switch parameters
//   storage      static + J/byte x bytes read and written / sample length
// With the linear GPU curve the integral equals the energy models/energy/power_model.hpp computes from the
// run's totals (docs/energy-cost.md). Each sample counts its true length (the last one may be cut short).
// Local: each rank derives the series of its own components (a switch's ports all belong to its LP).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "engine/series_recorder.hpp"
#include "models/energy/power_model.hpp"

namespace warpsim::energy {

struct PowerSeriesTotals {
  // energy_j of this rank's components, keyed (kind id << 48) | global component id: a caller that
  // gathers them from every rank and adds them in key order gets the same total for any partition.
  std::vector<std::pair<std::uint64_t, double>> component_joules;
  std::uint64_t nodes = 0;  // 1 + the largest gpu "node" column on this rank (0 without GPUs)
};

// Call after recorder.finish(). Kinds that are absent or lack their input series are skipped.
PowerSeriesTotals add_power_series(SeriesRecorder& recorder, const PowerParams& power);

}  // namespace warpsim::energy
