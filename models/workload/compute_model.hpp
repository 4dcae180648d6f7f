// Compute-time model of one GPU: a roofline on the datasheet peaks with saturating efficiency curves in the
// op's size, optionally overridden per op by a measured table (measured_table.hpp).
//
// Efficiency curves: eff_c(W) = compute_eff_max * W / (W + W_half) with W_half = peak * compute_eff_max *
// op_overhead_s, and the same form in bytes for HBM. This saturating curve is exactly "time = work at the
// asymptotic rate + a fixed per-kernel overhead", which is why it is parametrized by an overhead in seconds:
//   t = max(flops / (peak(dtype) * eff_c(flops)), bytes / (hbm_bw * eff_m(bytes)))
//     = max(flops / (peak * compute_eff_max) + t0, bytes / (hbm_bw * memory_eff_max) + t0).
//
// GEMM quantization (ops that carry a GemmShape): a GEMM kernel cuts its output into tiles, one SM computes
// one tile at a time, and tiles run in waves of one tile per SM (NVIDIA, "Matrix Multiplication Background
// User's Guide", sections 3.1 tile and 3.2 wave quantization). A partial edge tile costs a whole tile and
// a partial last wave costs a whole wave, so the compute term is multiplied by
//   q = launched tile-work / useful tile-work = waves * SMs / (useful tiles * split)  (>= 1),
// with useful tiles = m * n * batch / tile area (fractional), waves = ceil(tiles * split / SMs). A GEMM with
// fewer tiles than SMs is split along K (split-K, as cuBLAS/CUTLASS do) into as many parts as fill the SMs
// and K allows (one part per main-loop stage of K at most). The tile's orientation that gives the smaller q
// is used. A backward op averages the q of its dgrad and wgrad GEMMs (equal FLOPs each). The measured table
// and the memory term are not affected; elementwise ops carry no shape.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "models/workload/gemm_shape.hpp"
#include "models/workload/gpu_profile.hpp"
#include "models/workload/ops.hpp"

namespace warpsim::workload {

class MeasuredTable;

struct EfficiencyParams {
  double compute_eff_max = 0.80;  // large tensor-core GEMMs: fraction of dense datasheet peak
  double memory_eff_max = 0.85;   // large streaming kernels: fraction of datasheet HBM bandwidth
  double op_overhead_s = 4e-6;    // per-kernel launch + tail; W_half = peak * eff_max * this
};

// One compute op as the model sees it.
struct ComputeWork {
  ComputeWork() = default;
  ComputeWork(std::string_view name_, double flops_, double bytes_, DType dtype_, GemmShape gemm_ = {})
      : name(name_), flops(flops_), bytes(bytes_), dtype(dtype_), gemm(gemm_) {}

  std::string_view name;  // op name, the key of the measured table (e.g. "qkv_fwd")
  double flops = 0;
  double bytes = 0;  // HBM traffic (reads + writes)
  DType dtype = DType::kBf16;
  GemmShape gemm;  // m == 0: not a GEMM, no quantization
};

// What the model needs of an op (its name, work, dtype and GEMM shape).
ComputeWork compute_work(const Op& op);

// Quantization factor q (header comment) of one GEMM output of rows x cols with `inner` depth, `batch`
// times, on `gpu`; 1 when the tiles fill whole waves exactly.
double gemm_wave_factor(const GpuProfile& gpu, double rows, double cols, double inner, double batch);
// q of an op's GEMM: forward as above, backward the mean over dgrad and wgrad; 1 for an invalid shape.
double gemm_quantization(const GpuProfile& gpu, const GemmShape& g);

class ComputeModel {
 public:
  ComputeModel(const GpuProfile& gpu, EfficiencyParams params = {},
               std::shared_ptr<const MeasuredTable> table = nullptr);

  double compute_efficiency(double flops) const;  // eff_c(W)
  double memory_efficiency(double bytes) const;   // eff_m(B)
  double seconds(const ComputeWork& op) const;
  std::uint64_t picoseconds(const ComputeWork& op) const;
  double seconds(const Op& op) const { return seconds(compute_work(op)); }
  std::uint64_t picoseconds(const Op& op) const { return picoseconds(compute_work(op)); }

  const GpuProfile& gpu() const { return *gpu_; }
  const EfficiencyParams& params() const { return params_; }

 private:
  const GpuProfile* gpu_;
  EfficiencyParams params_;
  std::shared_ptr<const MeasuredTable> table_;
};

}  // namespace warpsim::workload
