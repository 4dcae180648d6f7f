// Roofline compute-time model with per-GPU kernel efficiencies (see compute_model.hpp).
#include "models/workload/compute_model.hpp"

#include <algorithm>
#include <cmath>
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

}  // namespace

ComputeWork compute_work(const Op& op) {
  return {op.name, op.flops, op.bytes, op.dtype, op.gemm, op.kernel};
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

double gemm_quantization(const GpuProfile& gpu, const GemmShape& g) {
  if (!g.valid() || !(gpu.sms > 0)) return 1.0;
  if (!g.backward) return gemm_wave_factor(gpu, g.m, g.n, g.k, g.batch);
  // dgrad: output m x k over inner n; wgrad: output k x n over inner m. Each is half the op's FLOPs.
  return 0.5 *
         (gemm_wave_factor(gpu, g.m, g.k, g.n, g.batch) + gemm_wave_factor(gpu, g.k, g.n, g.m, g.batch));
}

ComputeModel::ComputeModel(const GpuProfile& gpu, EfficiencyParams params,
                           std::shared_ptr<const MeasuredTable> table)
    : gpu_(&gpu), overrides_(params), params_(params.resolved(gpu)), table_(std::move(table)) {
  if (!(params_.compute_eff_max > 0 && params_.compute_eff_max <= 1)) {
    throw std::invalid_argument("compute_eff_max: must be within (0, 1]");
  }
  if (!(params_.memory_eff_max > 0 && params_.memory_eff_max <= 1)) {
    throw std::invalid_argument("memory_eff_max: must be within (0, 1]");
  }
  if (!(params_.op_overhead_s >= 0) || !std::isfinite(params_.op_overhead_s)) {
    throw std::invalid_argument("op_overhead_s: must be >= 0");
  }
}

double ComputeModel::kernel_efficiency(KernelKind kind, DType dtype) const {
  const KernelEfficiency& k = gpu_->kernels;
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
  return set(overrides_.compute_eff_max) ? overrides_.compute_eff_max : k.gemm(dtype);
}

double ComputeModel::compute_efficiency(double flops) const {
  const double half = gpu_->peak_bf16_flops * params_.compute_eff_max * params_.op_overhead_s;
  return flops <= 0 ? 0.0 : params_.compute_eff_max * flops / (flops + half);
}

double ComputeModel::memory_efficiency(double bytes) const {
  const double half = gpu_->hbm_bytes_per_s * params_.memory_eff_max * params_.op_overhead_s;
  return bytes <= 0 ? 0.0 : params_.memory_eff_max * bytes / (bytes + half);
}

double ComputeModel::seconds(const ComputeWork& op) const {
  if (table_) {
    if (auto t = table_->lookup(op.name, op.flops)) return *t;
  }
  const double peak = gpu_->peak_flops(op.dtype);
  if (op.flops > 0 && peak <= 0) {
    throw std::invalid_argument("model.dtype: " + std::string(to_string(op.dtype)) + " is not supported by " +
                                std::string(gpu_->name));
  }
  // The closed form of the saturating curves (header comment): sustained rate + one per-kernel gap.
  const double work = op.kernel == KernelKind::kAttentionBwd ? op.flops * kAttentionBwdRecompute : op.flops;
  const double t_compute = op.flops > 0 ? work / (peak * kernel_efficiency(op.kernel, op.dtype)) *
                                              gemm_quantization(*gpu_, op.gemm)
                                        : 0.0;
  const double t_memory = op.bytes > 0 ? op.bytes / (gpu_->hbm_bytes_per_s * params_.memory_eff_max) : 0.0;
  if (op.flops <= 0 && op.bytes <= 0) return 0.0;
  return std::max(t_compute, t_memory) + params_.op_overhead_s;
}

std::uint64_t ComputeModel::picoseconds(const ComputeWork& op) const {
  return static_cast<std::uint64_t>(std::llround(seconds(op) * 1e12));
}

}  // namespace warpsim::workload
