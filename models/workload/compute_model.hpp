// Compute-time model of one GPU: a roofline on the datasheet peaks with saturating efficiency curves in the
// op's size, optionally overridden per op by a measured table (measured_table.hpp).
//
// Efficiency curves: eff_c(W) = compute_eff_max * W / (W + W_half) with W_half = peak * compute_eff_max *
// op_overhead_s, and the same form in bytes for HBM. This saturating curve is exactly "time = work at the
// asymptotic rate + a fixed per-kernel overhead", which is why it is parametrized by an overhead in seconds:
//   t = max(flops / (peak(dtype) * eff_c(flops)), bytes / (hbm_bw * eff_m(bytes)))
//     = max(flops / (peak * compute_eff_max) + t0, bytes / (hbm_bw * memory_eff_max) + t0).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "models/workload/gpu_profile.hpp"

namespace warpsim::workload {

class MeasuredTable;

struct EfficiencyParams {
  double compute_eff_max = 0.80;  // large tensor-core GEMMs: fraction of dense datasheet peak
  double memory_eff_max = 0.85;   // large streaming kernels: fraction of datasheet HBM bandwidth
  double op_overhead_s = 4e-6;    // per-kernel launch + tail; W_half = peak * eff_max * this
};

// One compute op as the model sees it.
struct ComputeWork {
  std::string_view name;  // op name, the key of the measured table (e.g. "qkv_fwd")
  double flops = 0;
  double bytes = 0;  // HBM traffic (reads + writes)
  DType dtype = DType::kBf16;
};

class ComputeModel {
 public:
  ComputeModel(const GpuProfile& gpu, EfficiencyParams params = {},
               std::shared_ptr<const MeasuredTable> table = nullptr);

  double compute_efficiency(double flops) const;  // eff_c(W)
  double memory_efficiency(double bytes) const;   // eff_m(B)
  double seconds(const ComputeWork& op) const;
  std::uint64_t picoseconds(const ComputeWork& op) const;

  const GpuProfile& gpu() const { return *gpu_; }
  const EfficiencyParams& params() const { return params_; }

 private:
  const GpuProfile* gpu_;
  EfficiencyParams params_;
  std::shared_ptr<const MeasuredTable> table_;
};

}  // namespace warpsim::workload
