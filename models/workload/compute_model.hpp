// Compute-time model of one GPU: a roofline on the datasheet peaks with the kernel-level efficiencies
// measured on that GPU generation (KernelEfficiency in gpu_profile.hpp; every value cited in
// docs/gpu-profiles.md), optionally overridden per op by a measured table (measured_table.hpp).
//
// Each op is charged its work at the sustained rate of its kernel class plus one fixed per-kernel gap:
//   t = max(flops * w / (peak(dtype) * eff_c), bytes / (hbm_bw * eff_m)) + gap
// with eff_c by kernel class: GEMMs the sustained large-GEMM efficiency of the op's dtype (FP8 separately),
// flash attention its own forward and backward efficiencies; w = 1, except the flash-attention backward,
// which recomputes the score matrix and so executes 2.5x the forward's FLOPs where the op carries 2x
// (w = 1.25; its efficiency is measured in that 2.5x convention). eff_m is the streaming HBM efficiency.
// Flash attention under a causal mask (AttentionCall): the op carries what the kernel executes, half the
// unmasked FLOPs (the key blocks above the diagonal are skipped), and w is multiplied by
// causal_attention_slowdown(): the kernel runs at r(keys) of the unmasked rate (the GPU profile's measured
// causal/unmasked ratio, e.g. H100 cuDNN 0.63 at 512 keys to 0.91 at 16k: the diagonal blocks and the
// uneven work per query block weigh less as sequences grow), linear in log2(keys) between the measured
// lengths. With context parallelism only the diagonal call of the ring (1/cp of the work) is causal:
// w_causal = (1/cp) / r(seq/cp) + (1 - 1/cp).
// The closed form is the same as the saturating curves eff_c(W) = eff * W / (W + W_half), W_half = peak *
// eff * gap, that earlier versions documented.
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
// GEMM depth: each output tile pays a fixed cost (prologue, epilogue) beside a main loop that grows with K,
// so a GEMM of depth K runs at 1 / (1 + K0 / K) of the large-K rate (the profile's gemm_k_half K0, from
// measured rates by K; 0 = not measured). The profile's GEMM efficiency (the best shape of a search) is the
// rate the measured tables show at K = kGemmDepthReference (4096), and no shape is charged faster than it:
//   d = max(1, (1 + K0 / K) / (1 + K0 / 4096)),
// on top of q (dgrad and wgrad each with their own depth: the op's forward N and M).
//
// Overrides (EfficiencyParams, from the spec's compute_model fields): a set field replaces the profile's
// value: compute_eff_max the sustained GEMM efficiency of every dtype, memory_eff_max the HBM efficiency,
// op_overhead_s the per-kernel gap. Unset (NaN, the default) = the GPU profile's measured value.
// Scales (EfficiencyParams::scale, KernelScales in gpu_profile.hpp; sensitivity studies) multiply the values
// in force, measured or overridden: gemm_eff and sustained_clock the GEMM efficiencies (sustained_clock also
// flash attention's), hbm_eff the HBM efficiency, kernel_gap the per-kernel gap. Every scaled efficiency
// must stay within (0, 1].
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string_view>

#include "models/workload/attention_call.hpp"
#include "models/workload/gemm_shape.hpp"
#include "models/workload/gpu_profile.hpp"
#include "models/workload/ops.hpp"

namespace warpsim::workload {

class MeasuredTable;

// Marks an EfficiencyParams field as unset: the GPU profile's measured value applies.
inline constexpr double kFromProfile = std::numeric_limits<double>::quiet_NaN();

struct EfficiencyParams {
  double compute_eff_max = kFromProfile;  // sustained large-GEMM efficiency, fraction of the dense peak
  double memory_eff_max = kFromProfile;   // streaming kernels: fraction of datasheet HBM bandwidth
  double op_overhead_s = kFromProfile;    // per-kernel launch + tail, seconds
  KernelScales scale;                     // multipliers on the values in force (all 1: none)

  // This params' fields where set, the profile's kernel efficiencies elsewhere (compute_eff_max: the
  // sustained BF16 GEMM efficiency). The scales are not applied (the result's are 1).
  EfficiencyParams resolved(const GpuProfile& gpu) const;
};

// One compute op as the model sees it.
struct ComputeWork {
  ComputeWork() = default;
  ComputeWork(std::string_view name_, double flops_, double bytes_, DType dtype_, GemmShape gemm_ = {},
              KernelKind kernel_ = KernelKind::kMatmul, AttentionCall attention_ = {})
      : name(name_),
        flops(flops_),
        bytes(bytes_),
        dtype(dtype_),
        gemm(gemm_),
        kernel(kernel_),
        attention(attention_) {}

  std::string_view name;  // op name, the key of the measured table (e.g. "qkv_fwd")
  double flops = 0;
  double bytes = 0;  // HBM traffic (reads + writes)
  DType dtype = DType::kBf16;
  GemmShape gemm;  // m == 0: not a GEMM, no quantization
  KernelKind kernel = KernelKind::kMatmul;
  AttentionCall attention;  // fused attention: its mask and head dimension (header comment)
};

// How much longer a fused-attention op's executed FLOPs take under its mask than without one: 1 without a
// mask; with a causal mask the diagonal kernel call runs at the GPU's measured causal rate `ratio` (header
// comment).
double causal_attention_slowdown(const AttentionCall& call, const CausalRatio& ratio);
// A fused-attention kernel's rate at the call's head dimension over its rate at 128: `factors` at 64, 128
// and 256, linear in log2(head dimension) between them, the end values beyond; 1 when head_dim is 0.
double attention_head_dim_factor(const AttentionCall& call, const HeadDimFactors& factors);

// What the model needs of an op (its name, work, dtype and GEMM shape).
ComputeWork compute_work(const Op& op);

// Quantization factor q (header comment) of one GEMM output of rows x cols with `inner` depth, `batch`
// times, on `gpu`; 1 when the tiles fill whole waves exactly.
double gemm_wave_factor(const GpuProfile& gpu, double rows, double cols, double inner, double batch);
// q of an op's GEMM: forward as above, backward the mean over dgrad and wgrad; 1 for an invalid shape.
double gemm_quantization(const GpuProfile& gpu, const GemmShape& g);
// The depth at which a profile's GEMM efficiency applies unchanged (header comment).
inline constexpr double kGemmDepthReference = 4096;
// The depth factor d of one GEMM of depth `inner` (header comment); 1 when the profile has no K0.
double gemm_depth_factor(const GpuProfile& gpu, double inner);
// What the compute term of an op's GEMM is multiplied by: q x d, backward the mean over dgrad and wgrad.
double gemm_shape_factor(const GpuProfile& gpu, const GemmShape& g);

class ComputeModel {
 public:
  ComputeModel(const GpuProfile& gpu, EfficiencyParams params = {},
               std::shared_ptr<const MeasuredTable> table = nullptr);

  // Sustained efficiency (fraction of peak(dtype)) of a kernel class, the overrides applied.
  double kernel_efficiency(KernelKind kind, DType dtype) const;
  double compute_efficiency(double flops) const;  // eff_c(W) of a BF16 GEMM of W FLOPs, gap included
  double memory_efficiency(double bytes) const;   // eff_m(B), gap included
  double seconds(const ComputeWork& op) const;
  std::uint64_t picoseconds(const ComputeWork& op) const;
  double seconds(const Op& op) const { return seconds(compute_work(op)); }
  std::uint64_t picoseconds(const Op& op) const { return picoseconds(compute_work(op)); }

  // The GPU profile as the model uses it: the shipped profile with the scales applied to its kernels.
  const GpuProfile& gpu() const { return gpu_; }
  // The efficiencies in force: overrides where given, the profile's values elsewhere, scales applied
  // (never NaN).
  const EfficiencyParams& params() const { return params_; }
  // The overrides as given (NaN = unset; scales not applied).
  const EfficiencyParams& overrides() const { return overrides_; }

 private:
  GpuProfile gpu_;
  EfficiencyParams overrides_;
  EfficiencyParams scaled_overrides_;  // overrides_ with the scales applied
  EfficiencyParams params_;
  std::shared_ptr<const MeasuredTable> table_;
};

}  // namespace warpsim::workload
