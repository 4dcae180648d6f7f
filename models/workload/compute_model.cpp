// Roofline compute-time model with per-GPU kernel efficiencies (see compute_model.hpp).
#include "models/workload/compute_model.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>

#include "models/workload/measured_table.hpp"

namespace warpsim::workload {

namespace {

// FlashAttention's backward executes 2.5x the forward FLOPs (it recomputes the scores); the op carries 2x.
constexpr double kAttentionBwdRecompute = 2.5 / 2.0;

bool set(double v) {
  return !std::isnan(v);
}

// `values` measured at the ascending points `at`, read at x: linear in log2(x) between two points, the end
// values beyond them, and a measured value itself at a measured point.
double log2_interpolated(std::span<const double> at, std::span<const double> values, double x) {
  const std::size_t n = at.size();
  if (x <= at[0]) return values[0];
  if (x >= at[n - 1]) return values[n - 1];
  std::size_t i = 1;
  while (at[i] < x) ++i;
  if (at[i] == x) return values[i];  // exactly, not through the interpolation's rounding
  const double f = std::log2(x / at[i - 1]) / std::log2(at[i] / at[i - 1]);
  return values[i - 1] + f * (values[i] - values[i - 1]);
}

// The profile the model uses: `gpu` with its kernel efficiencies scaled.
GpuProfile with_scales(const GpuProfile& gpu, const KernelScales& s) {
  for (const auto& [v, name] : {std::pair{s.gemm_eff, "gemm_eff"},
                                {s.sustained_clock, "sustained_clock"},
                                {s.hbm_eff, "hbm_eff"},
                                {s.kernel_gap, "kernel_gap"}}) {
    if (!(v > 0) || !std::isfinite(v)) {
      throw std::invalid_argument(std::string("scale.") + name + ": must be > 0 (got " + std::to_string(v) +
                                  ")");
    }
  }
  GpuProfile g = gpu;
  g.kernels = scaled(gpu.kernels, s);
  return g;
}

// The overrides that are set, multiplied by the scales that apply to them.
EfficiencyParams scale_overrides(EfficiencyParams p) {
  if (set(p.compute_eff_max)) p.compute_eff_max *= p.scale.gemm_eff * p.scale.sustained_clock;
  if (set(p.memory_eff_max)) p.memory_eff_max *= p.scale.hbm_eff;
  if (set(p.op_overhead_s)) p.op_overhead_s *= p.scale.kernel_gap;
  return p;
}

}  // namespace

double causal_attention_slowdown(const AttentionCall& call, const CausalRatio& ratio) {
  if (!call.causal()) return 1.0;
  // The diagonal call (one of cp_steps) at the causal rate, the others (unmasked half blocks of the
  // load-balanced ring) at the unmasked rate.
  const double diagonal = 1.0 / std::max(1.0, call.cp_steps);
  return diagonal / log2_interpolated(kCausalKeys, ratio, call.causal_keys) + (1.0 - diagonal);
}

double attention_head_dim_factor(const AttentionCall& call, const HeadDimFactors& factors) {
  return call.head_dim > 0 ? log2_interpolated(kAttentionHeadDims, factors, call.head_dim) : 1.0;
}

ComputeWork compute_work(const Op& op) {
  return {op.name, op.flops, op.bytes, op.dtype, op.gemm, op.kernel, op.attention};
}

EfficiencyParams EfficiencyParams::resolved(const GpuProfile& gpu) const {
  EfficiencyParams r;
  r.compute_eff_max = set(compute_eff_max) ? compute_eff_max : gpu.kernels.gemm(DType::kBf16);
  r.memory_eff_max = set(memory_eff_max) ? memory_eff_max : gpu.kernels.memory;
  r.op_overhead_s = set(op_overhead_s) ? op_overhead_s : gpu.kernels.kernel_gap_s;
  return r;
}

double gemm_wave_factor(const GpuProfile& gpu, double rows, double cols, double inner, double batch) {
  const double sms = gpu.sms;
  const double tile_area = gpu.gemm_tile_m * gpu.gemm_tile_n;
  const double useful = rows * cols * batch / tile_area;
  double best = 0;
  for (const auto& [tr, tc] :
       {std::pair{gpu.gemm_tile_m, gpu.gemm_tile_n}, {gpu.gemm_tile_n, gpu.gemm_tile_m}}) {
    const double tiles = std::ceil(rows / tr) * std::ceil(cols / tc) * std::ceil(batch);
    // Split-K only for a GEMM that cannot fill one wave, never finer than one main-loop stage of K.
    double split = 1;
    if (tiles < sms)
      split = std::max(1.0, std::min(std::floor(sms / tiles), std::floor(inner / gpu.gemm_tile_k)));
    const double waves = std::ceil(tiles * split / sms);
    const double q = waves * sms / (useful * split);
    if (best == 0 || q < best) best = q;
  }
  return best;
}

namespace {

// Mean of per_gemm(rows, cols, inner) over the GEMMs of an op: the forward is one; a backward op is dgrad
// (output m x k over inner n) and wgrad (output k x n over inner m), each half the op's FLOPs. 1 for an
// invalid shape or a profile without SMs.
template <class PerGemm>
double mean_over_gemms(const GpuProfile& gpu, const GemmShape& g, PerGemm per_gemm) {
  if (!g.valid() || !(gpu.sms > 0)) return 1.0;
  if (!g.backward) return per_gemm(g.m, g.n, g.k);
  return 0.5 * (per_gemm(g.m, g.k, g.n) + per_gemm(g.k, g.n, g.m));
}

}  // namespace

double gemm_quantization(const GpuProfile& gpu, const GemmShape& g) {
  return mean_over_gemms(gpu, g, [&](double rows, double cols, double inner) {
    return gemm_wave_factor(gpu, rows, cols, inner, g.batch);
  });
}

double gemm_depth_factor(const GpuProfile& gpu, double inner) {
  const double k_half = gpu.kernels.gemm_k_half;
  if (!(k_half > 0 && inner > 0)) return 1.0;
  // Never below 1: the best-shape rate is the most any shape reached (header comment).
  return std::max(1.0, (1.0 + k_half / inner) / (1.0 + k_half / kGemmDepthReference));
}

double gemm_shape_factor(const GpuProfile& gpu, const GemmShape& g) {
  return mean_over_gemms(gpu, g, [&](double rows, double cols, double inner) {
    return gemm_wave_factor(gpu, rows, cols, inner, g.batch) * gemm_depth_factor(gpu, inner);
  });
}

ComputeModel::ComputeModel(const GpuProfile& gpu, EfficiencyParams params,
                           std::shared_ptr<const MeasuredTable> table)
    : gpu_(with_scales(gpu, params.scale)),
      overrides_(params),
      scaled_overrides_(scale_overrides(params)),
      params_(scaled_overrides_.resolved(gpu_)),
      table_(std::move(table)) {
  params_.scale = params.scale;
  // A scale must not lift a kernel class past its peak.
  const KernelEfficiency& k = gpu_.kernels;
  for (const auto& [eff, what] : {std::pair{k.gemm(DType::kBf16), "the BF16 GEMM efficiency"},
                                  {k.gemm(DType::kFp8), "the FP8 GEMM efficiency"},
                                  {k.sustain * k.attn_fwd, "the flash-attention forward efficiency"},
                                  {k.sustain * k.attn_bwd, "the flash-attention backward efficiency"}}) {
    if (eff > 1) {
      throw std::invalid_argument("scale: " + std::string(what) + " of " + std::string(gpu_.name) +
                                  " scaled to " + std::to_string(eff) + ", above 1");
    }
  }
  if (!(params_.compute_eff_max > 0 && params_.compute_eff_max <= 1)) {
    throw std::invalid_argument(params.scale.gemm_eff * params.scale.sustained_clock != 1
                                    ? "scale: compute_eff_max x scale.gemm_eff x scale.sustained_clock must "
                                      "be within (0, 1]"
                                    : "compute_eff_max: must be within (0, 1]");
  }
  if (!(params_.memory_eff_max > 0 && params_.memory_eff_max <= 1)) {
    throw std::invalid_argument(params.scale.hbm_eff != 1
                                    ? "scale.hbm_eff: the scaled HBM efficiency must be within (0, 1]"
                                    : "memory_eff_max: must be within (0, 1]");
  }
  if (!(params_.op_overhead_s >= 0) || !std::isfinite(params_.op_overhead_s)) {
    throw std::invalid_argument("op_overhead_s: must be >= 0");
  }
}

double ComputeModel::kernel_efficiency(KernelKind kind, DType dtype) const {
  const KernelEfficiency& k = gpu_.kernels;
  switch (kind) {
    case KernelKind::kAttentionFwd:
      return k.sustain * k.attn_fwd;
    case KernelKind::kAttentionBwd:
      return k.sustain * k.attn_bwd;
    case KernelKind::kMatmul:
      break;
  }
  // FP32 ops (the optimizer) run on the CUDA cores and are memory-bound; the GEMM value keeps their tiny
  // compute term finite.
  return set(scaled_overrides_.compute_eff_max) ? scaled_overrides_.compute_eff_max : k.gemm(dtype);
}

double ComputeModel::compute_efficiency(double flops) const {
  const double half = gpu_.peak_bf16_flops * params_.compute_eff_max * params_.op_overhead_s;
  return flops <= 0 ? 0.0 : params_.compute_eff_max * flops / (flops + half);
}

double ComputeModel::memory_efficiency(double bytes) const {
  const double half = gpu_.hbm_bytes_per_s * params_.memory_eff_max * params_.op_overhead_s;
  return bytes <= 0 ? 0.0 : params_.memory_eff_max * bytes / (bytes + half);
}

double ComputeModel::seconds(const ComputeWork& op) const {
  if (table_) {
    if (auto t = table_->lookup(op.name, op.flops)) return *t;
  }
  const double peak = gpu_.peak_flops(op.dtype);
  if (op.flops > 0 && peak <= 0) {
    throw std::invalid_argument("model.dtype: " + std::string(to_string(op.dtype)) + " is not supported by " +
                                std::string(gpu_.name));
  }
  // The closed form of the saturating curves (header comment): sustained rate + one per-kernel gap.
  double work = op.kernel == KernelKind::kAttentionBwd ? op.flops * kAttentionBwdRecompute : op.flops;
  if (op.kernel != KernelKind::kMatmul) {
    const KernelEfficiency& k = gpu_.kernels;
    work *=
        causal_attention_slowdown(op.attention, k.causal) /
        attention_head_dim_factor(
            op.attention, op.kernel == KernelKind::kAttentionBwd ? k.attn_bwd_head_dim : k.attn_fwd_head_dim);
    if (op.attention.dropout) work *= k.attn_dropout;
  }
  const double t_compute =
      op.flops > 0 ? work / (peak * kernel_efficiency(op.kernel, op.dtype)) * gemm_shape_factor(gpu_, op.gemm)
                   : 0.0;
  const double t_memory = op.bytes > 0 ? op.bytes / (gpu_.hbm_bytes_per_s * params_.memory_eff_max) : 0.0;
  if (op.flops <= 0 && op.bytes <= 0) return 0.0;
  return std::max(t_compute, t_memory) + params_.op_overhead_s;
}

std::uint64_t ComputeModel::picoseconds(const ComputeWork& op) const {
  return static_cast<std::uint64_t>(std::llround(seconds(op) * 1e12));
}

}  // namespace warpsim::workload
