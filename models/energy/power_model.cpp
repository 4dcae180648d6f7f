// Component power models and run energy (see power_model.hpp; defaults documented in docs/energy-cost.md).
#include "models/energy/power_model.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "models/workload/gpu_profile.hpp"

namespace warpsim::energy {

namespace {

// Idle power per GPU profile, watts: an assumption (about 13% of TDP), in line with the 60-90 W that
// public nvidia-smi readings show for idle SXM parts of these generations. Busy power is the profile's TDP.
struct IdleWatts {
  std::string_view gpu;
  double idle_w;
};
constexpr IdleWatts kIdle[] = {{"A100-80GB", 55}, {"H100-SXM", 90}, {"H200", 90}, {"B200", 140}};

// Network, host and storage defaults: illustrative assumptions for a 400 Gb/s InfiniBand-class fabric of
// radix-64 switches and an 8-GPU HGX-class node (docs/energy-cost.md lists them); override per experiment.
constexpr double kNodeStaticW = 1500;
constexpr LinkPower kNic{25, joules_per_byte_from_pj_per_bit(5)};
constexpr LinkPower kNvSwitch{200, joules_per_byte_from_pj_per_bit(2)};
constexpr LinkPower kSwitch{750, joules_per_byte_from_pj_per_bit(10)};
constexpr LinkPower kStorage{400, joules_per_byte_from_pj_per_bit(20)};

}  // namespace

PowerParams default_power_params(std::string_view gpu_name, std::string_view field) {
  const workload::GpuProfile& gpu = workload::find_gpu_profile(gpu_name, field);
  PowerParams p;
  for (const auto& row : kIdle) {
    if (row.gpu == gpu.name) p.gpu_idle_w = row.idle_w;
  }
  if (p.gpu_idle_w == 0) throw std::logic_error("no idle power for GPU profile " + std::string(gpu.name));
  p.gpu_busy_w = gpu.tdp_watts;
  p.node_static_w = kNodeStaticW;
  p.nic = kNic;
  p.nvswitch = kNvSwitch;
  p.network_switch = kSwitch;
  p.storage = kStorage;
  return p;
}

double gpu_power_w(const PowerParams& p, double utilization) {
  const double u = std::clamp(utilization, 0.0, 1.0);
  return p.gpu_idle_w + (p.gpu_busy_w - p.gpu_idle_w) * u;
}

double link_power_w(const LinkPower& p, double bytes, double seconds) {
  return p.static_w + (seconds > 0 ? p.joules_per_byte * bytes / seconds : 0.0);
}

std::vector<double> gpu_power_series(const PowerParams& p, std::span<const double> utilization) {
  std::vector<double> out;
  out.reserve(utilization.size());
  for (double u : utilization) out.push_back(gpu_power_w(p, u));
  return out;
}

std::vector<double> link_power_series(const LinkPower& p, std::span<const double> bytes, double interval_s) {
  std::vector<double> out;
  out.reserve(bytes.size());
  for (double b : bytes) out.push_back(link_power_w(p, b, interval_s));
  return out;
}

double integrate_joules(std::span<const double> power_w, double interval_s, double last_interval_s) {
  if (power_w.empty()) return 0;
  if (last_interval_s < 0) last_interval_s = interval_s;
  double sum = 0;
  for (std::size_t i = 0; i + 1 < power_w.size(); ++i) sum += power_w[i];
  return sum * interval_s + power_w.back() * last_interval_s;
}

const char* to_string(Kind k) {
  switch (k) {
    case Kind::kGpu:
      return "gpu";
    case Kind::kNic:
      return "nic";
    case Kind::kNvSwitch:
      return "nvswitch";
    case Kind::kSwitch:
      return "switch";
    case Kind::kStorage:
      return "storage";
    case Kind::kCount:
      break;
  }
  return "?";
}

double EnergyBreakdown::total_joules() const {
  double sum = node_joules;
  for (double j : kind_joules) sum += j;
  return sum;
}

EnergyBreakdown run_energy(const PowerParams& p, const ComponentTotals& totals, double seconds) {
  EnergyBreakdown e;
  const auto link = [&](Kind k, const LinkPower& lp) {
    const KindTotals& t = totals[k];
    return static_cast<double>(t.count) * lp.static_w * seconds +
           lp.joules_per_byte * static_cast<double>(t.bytes);
  };
  const KindTotals& gpus = totals[Kind::kGpu];
  // Linear in busy time: the integral of P(u(t)) for a GPU that is either busy or idle at every instant.
  e.gpu_idle_joules = static_cast<double>(gpus.count) * p.gpu_idle_w * seconds;
  e.gpu_dynamic_joules = (p.gpu_busy_w - p.gpu_idle_w) * static_cast<double>(gpus.busy_ps) * 1e-12;
  e.kind_joules[static_cast<std::size_t>(Kind::kGpu)] = e.gpu_idle_joules + e.gpu_dynamic_joules;
  e.kind_joules[static_cast<std::size_t>(Kind::kNic)] = link(Kind::kNic, p.nic);
  e.kind_joules[static_cast<std::size_t>(Kind::kNvSwitch)] = link(Kind::kNvSwitch, p.nvswitch);
  e.kind_joules[static_cast<std::size_t>(Kind::kSwitch)] = link(Kind::kSwitch, p.network_switch);
  e.kind_joules[static_cast<std::size_t>(Kind::kStorage)] = link(Kind::kStorage, p.storage);
  e.node_joules = static_cast<double>(totals.nodes) * p.node_static_w * seconds;
  return e;
}

}  // namespace warpsim::energy
