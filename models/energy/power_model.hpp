// Power models of the cluster's components and the energy they imply.
// A GPU LP is either computing or not at any instant, so a GPU draws busy_w while computing and idle_w
// otherwise; over a sampling interval with busy fraction u that is the linear curve
// P(u) = idle_w + (busy_w - idle_w) * u, which makes the energy of a power series on any sampling grid equal
// to the energy from the GPU's total busy time (the property the tests check). NICs, switches and storage
// targets draw a static power plus an energy per byte they move. Defaults per GPU profile and their sources
// are in docs/energy-cost.md; every value can be overridden by the experiment's cost.power section.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace warpsim::energy {

// Static power plus energy per byte moved (NICs, switches, storage targets).
struct LinkPower {
  double static_w = 0;
  double joules_per_byte = 0;
};

struct PowerParams {
  double gpu_idle_w = 0;
  double gpu_busy_w = 0;
  double node_static_w = 0;  // host per node: CPUs, memory, fans, PSU losses (not GPUs, NICs, NVSwitch)
  LinkPower nic;             // per NIC (one per GPU); bytes = bytes it transmits (NVLink and scale-out)
  LinkPower nvswitch;        // per node's NVSwitch domain; bytes = bytes it forwards
  LinkPower network_switch;  // per leaf/spine/core switch; bytes = bytes it forwards
  LinkPower storage;         // per storage target; bytes = bytes read + written
};

// Picojoules per bit -> joules per byte.
constexpr double joules_per_byte_from_pj_per_bit(double pj_per_bit) {
  return pj_per_bit * 8e-12;
}

// The shipped defaults for a GPU profile name (A100-80GB, H100-SXM, H200, B200); throws
// std::invalid_argument naming `field` for an unknown name.
PowerParams default_power_params(std::string_view gpu_name, std::string_view field = "gpu_type");

// GPU power at busy fraction `utilization` in [0, 1] (clamped).
double gpu_power_w(const PowerParams& p, double utilization);
// Power of a byte-moving component that moved `bytes` during an interval of `seconds`.
double link_power_w(const LinkPower& p, double bytes, double seconds);

// Per-sample power of one component from its committed series on a fixed grid of `interval_s`:
// GPU busy fractions, or bytes moved per sample.
std::vector<double> gpu_power_series(const PowerParams& p, std::span<const double> utilization);
std::vector<double> link_power_series(const LinkPower& p, std::span<const double> bytes, double interval_s);
// Energy (joules) of a power series sampled on a grid of `interval_s`; the last sample may cover only
// `last_interval_s` (the run rarely ends on a grid point). last_interval_s < 0 = a full interval.
double integrate_joules(std::span<const double> power_w, double interval_s, double last_interval_s = -1);

// Component kinds of the cluster model, in the order ComponentTotals keeps them.
enum class Kind : std::uint8_t { kGpu, kNic, kNvSwitch, kSwitch, kStorage, kCount };
constexpr std::size_t kKinds = static_cast<std::size_t>(Kind::kCount);
const char* to_string(Kind k);

// What a run did, per component kind, summed over the components of that kind: plain integers so that
// ranks can sum them with one reduction.
struct KindTotals {
  std::uint64_t count = 0;
  std::uint64_t busy_ps = 0;  // GPUs: compute time; others: serialization/service time (informative)
  std::uint64_t bytes = 0;    // bytes moved (see PowerParams)
};
struct ComponentTotals {
  std::array<KindTotals, kKinds> kinds{};
  std::uint64_t nodes = 0;
  KindTotals& operator[](Kind k) { return kinds[static_cast<std::size_t>(k)]; }
  const KindTotals& operator[](Kind k) const { return kinds[static_cast<std::size_t>(k)]; }
};

// Energy of a run of `seconds` by kind, joules. Every component is powered for the whole run.
struct EnergyBreakdown {
  std::array<double, kKinds> kind_joules{};
  double node_joules = 0;                              // node_static_w x nodes x seconds
  double gpu_idle_joules = 0, gpu_dynamic_joules = 0;  // parts of kind_joules[kGpu]
  double total_joules() const;
  double joules(Kind k) const { return kind_joules[static_cast<std::size_t>(k)]; }
};
EnergyBreakdown run_energy(const PowerParams& p, const ComponentTotals& totals, double seconds);

}  // namespace warpsim::energy
