// Named model-parameter perturbations (see perturbation.hpp): each name maps to the spec fields that carry
// the parameter into the model; cluster fields are scaled through the --scale machinery (spec_overrides).
#include "experiment/validation/perturbation.hpp"

#include <array>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "experiment/spec/experiment_spec.hpp"
#include "experiment/spec/job_spec.hpp"
#include "experiment/validation/spec_overrides.hpp"
#include "models/workload/compute_model.hpp"
#include "models/workload/gpu_profile.hpp"

namespace warpsim::experiment::validation {

namespace {

constexpr std::array<PerturbableParameter, 7> kParameters{{
    {"gemm_eff",
     "sustained large-GEMM efficiency, BF16/FP16 and FP8 (the GPU profile's gemm_bf16/gemm_fp8): "
     "job.compute_model.scale.gemm_eff"},
    {"sustained_clock",
     "sustained SM clock under the power limit: every tensor-core kernel, GEMMs and flash attention (the "
     "profile's sustain): job.compute_model.scale.sustained_clock"},
    {"hbm_eff",
     "HBM efficiency of memory-bound kernels (the profile's memory): job.compute_model.scale.hbm_eff"},
    {"kernel_gap",
     "per-kernel launch and tail gap (the profile's kernel_gap_s): job.compute_model.scale.kernel_gap"},
    {"nvlink_bw", "NVLink bandwidth per GPU: cluster.scale_up.nvlink_bandwidth_gbps"},
    {"nic_bw",
     "scale-out bandwidth: every tier of cluster.fat_tree.links (or cluster.torus.links) bandwidth_gbps, "
     "NIC links and switch links alike"},
    {"collective_latency",
     "per-hop latency every collective step pays: cluster.scale_up.nvlink_latency_ns, the scale-out links' "
     "latency_ns, cluster.nic.injection_latency_ns, cluster.network.switch_latency_ns"},
}};

bool known(const std::string& name) {
  for (const auto& p : kParameters) {
    if (p.name == name) return true;
  }
  return false;
}

std::string known_list() {
  std::string s;
  for (const auto& p : kParameters) s += (s.empty() ? "" : ", ") + std::string(p.name);
  return s;
}

std::vector<Override> cluster_overrides(const spec::ExperimentSpec& exp, const Perturbation& p) {
  char f[32];
  std::snprintf(f, sizeof f, "%.17g", p.factor);
  const std::string links =
      exp.cluster().topology() == "torus" ? "cluster.torus.links" : "cluster.fat_tree.links";
  std::vector<std::string> paths;
  if (p.name == "nvlink_bw") paths = {"cluster.scale_up.nvlink_bandwidth_gbps"};
  if (p.name == "nic_bw") paths = {links + ".bandwidth_gbps"};
  if (p.name == "collective_latency") {
    paths = {"cluster.scale_up.nvlink_latency_ns", links + ".latency_ns", "cluster.nic.injection_latency_ns",
             "cluster.network.switch_latency_ns"};
  }
  std::vector<Override> out;
  for (const auto& path : paths) {
    Override o;
    o.kind = Override::Kind::kScale;
    o.path = path;
    o.value = f;
    o.flag = "--perturb " + p.name + ":";
    out.push_back(o);
  }
  return out;
}

}  // namespace

std::span<const PerturbableParameter> perturbable_parameters() {
  return kParameters;
}

Perturbation parse_perturbation(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    throw std::invalid_argument("--perturb: '" + text + "' is not NAME=FACTOR (names: " + known_list() + ")");
  }
  Perturbation p;
  p.name = text.substr(0, eq);
  const std::string value = text.substr(eq + 1);
  if (!known(p.name)) {
    throw std::invalid_argument("--perturb " + p.name + ": unknown parameter (known: " + known_list() + ")");
  }
  bool ok = false;
  try {
    std::size_t used = 0;
    p.factor = std::stod(value, &used);
    ok = used == value.size() && std::isfinite(p.factor) && p.factor > 0;
  } catch (const std::exception&) {
    ok = false;
  }
  if (!ok) {
    throw std::invalid_argument("--perturb " + p.name + ": factor must be a number > 0 (got '" + value +
                                "'; 1.1 is +10%)");
  }
  return p;
}

spec::ExperimentSpec apply_perturbations(spec::ExperimentSpec exp, const std::vector<Perturbation>& list) {
  if (list.empty()) return exp;
  std::vector<Override> overrides;
  for (const Perturbation& p : list) {
    auto& s = *exp.mutable_job()->mutable_compute_model()->mutable_scale();
    // A scale field at 0 (unset) counts as 1.
    auto times = [&](double current) { return (current == 0 ? 1.0 : current) * p.factor; };
    if (p.name == "gemm_eff") s.set_gemm_eff(times(s.gemm_eff()));
    if (p.name == "sustained_clock") s.set_sustained_clock(times(s.sustained_clock()));
    if (p.name == "hbm_eff") s.set_hbm_eff(times(s.hbm_eff()));
    if (p.name == "kernel_gap") s.set_kernel_gap(times(s.kernel_gap()));
    for (auto& o : cluster_overrides(exp, p)) overrides.push_back(std::move(o));
  }
  exp = apply_overrides(std::move(exp), overrides);
  try {
    exp = spec::validated(std::move(exp));
    // The compute model checks that no scaled efficiency exceeds 1 when the row's Job is built; check it
    // here too, so a bad factor stops the command before any simulation.
    if (exp.has_job()) {
      const workload::JobParams job = spec::to_job_params(exp.job());
      workload::EfficiencyParams e;
      if (job.compute_model.compute_eff_max) e.compute_eff_max = *job.compute_model.compute_eff_max;
      if (job.compute_model.memory_eff_max) e.memory_eff_max = *job.compute_model.memory_eff_max;
      if (job.compute_model.op_overhead_us) e.op_overhead_s = *job.compute_model.op_overhead_us * 1e-6;
      e.scale = job.compute_model.scale;
      try {
        const workload::ComputeModel check(workload::find_gpu_profile(job.gpu_type, "job.gpu_type"), e);
      } catch (const std::invalid_argument& err) {
        throw std::invalid_argument(std::string("job.compute_model.") + err.what());
      }
    }
    return exp;
  } catch (const std::invalid_argument& e) {
    std::string names;
    for (const auto& p : list) names += (names.empty() ? "" : ",") + p.name;
    throw std::invalid_argument("--perturb " + names + ": " + e.what());
  }
}

}  // namespace warpsim::experiment::validation
