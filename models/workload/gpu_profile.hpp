// Shipped GPU profiles (datasheet peaks) used by the compute-time model. Sources of every value are in
// docs/gpu-profiles.md; keep the two in sync.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace warpsim::workload {

enum class DType { kBf16, kFp16, kFp8, kFp32 };

std::string_view to_string(DType d);
double dtype_bytes(DType d);

struct GpuProfile {
  std::string_view name;
  // Dense (no structured sparsity) tensor-core peaks, FLOP/s. 0 = not supported by the hardware.
  double peak_bf16_flops;
  double peak_fp16_flops;
  double peak_fp8_flops;
  double peak_fp32_flops;     // non-tensor FP32 (the optimizer and FP32 jobs use this)
  double hbm_bytes;           // capacity
  double hbm_bytes_per_s;     // peak HBM bandwidth
  double nvlink_bytes_per_s;  // total NVLink bandwidth per GPU (both directions summed, as datasheets list)
  double tdp_watts;
  // GEMM execution geometry for tile/wave quantization (compute_model.hpp): streaming multiprocessors, and
  // the output tile one SM computes at a time in the large-GEMM kernels (rows x cols, either orientation)
  // with the K depth of one main-loop stage (the finest split-K granularity).
  double sms;
  double gemm_tile_m, gemm_tile_n, gemm_tile_k;

  double peak_flops(DType d) const;
};

// All shipped profiles.
std::span<const GpuProfile> gpu_profiles();
// Looks a profile up by name (case-sensitive); throws std::invalid_argument naming `field` and listing the
// known names when absent.
const GpuProfile& find_gpu_profile(std::string_view name, std::string_view field = "gpu_type");

}  // namespace warpsim::workload
