// Roofline compute-time model with efficiency curves (see compute_model.hpp).
#include "models/workload/compute_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "models/workload/measured_table.hpp"

namespace warpsim::workload {

ComputeModel::ComputeModel(const GpuProfile& gpu, EfficiencyParams params,
                           std::shared_ptr<const MeasuredTable> table)
    : gpu_(&gpu), params_(params), table_(std::move(table)) {
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

double ComputeModel::compute_efficiency(double flops) const {
  // Efficiency is a property of the curve, independent of dtype, so BF16 peak sets its scale.
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
  // The closed form of the saturating curves (header comment): asymptotic rate + one overhead.
  const double t_compute = op.flops > 0 ? op.flops / (peak * params_.compute_eff_max) : 0.0;
  const double t_memory = op.bytes > 0 ? op.bytes / (gpu_->hbm_bytes_per_s * params_.memory_eff_max) : 0.0;
  if (op.flops <= 0 && op.bytes <= 0) return 0.0;
  return std::max(t_compute, t_memory) + params_.op_overhead_s;
}

std::uint64_t ComputeModel::picoseconds(const ComputeWork& op) const {
  return static_cast<std::uint64_t>(std::llround(seconds(op) * 1e12));
}

}  // namespace warpsim::workload
