// The shipped GPU profiles (see gpu_profile.hpp; sources in docs/gpu-profiles.md).
#include "models/workload/gpu_profile.hpp"

#include <array>
#include <stdexcept>
#include <string>

namespace warpsim::workload {

namespace {

constexpr double kT = 1e12;
constexpr double kG = 1e9;

// Values per GPU, dense tensor-core rates (datasheets print "with sparsity" figures at 2x these). The
// GEMM tile is the 256x128 (x64 deep) tile NVIDIA's GEMM guide uses for one tile per SM on A100; we keep
// it for the later GPUs too (their large-GEMM kernels use tiles of the same area, docs/gpu-profiles.md).
constexpr std::array<GpuProfile, 4> kProfiles{{
    {"A100-80GB", 312 * kT, 312 * kT, 0.0, 19.5 * kT, 80 * kG, 2039 * kG, 600 * kG, 400, 108, 256, 128, 64},
    {"H100-SXM", 989.5 * kT, 989.5 * kT, 1979 * kT, 67 * kT, 80 * kG, 3350 * kG, 900 * kG, 700, 132, 256, 128,
     64},
    {"H200", 989.5 * kT, 989.5 * kT, 1979 * kT, 67 * kT, 141 * kG, 4800 * kG, 900 * kG, 700, 132, 256, 128,
     64},
    {"B200", 2250 * kT, 2250 * kT, 4500 * kT, 80 * kT, 180 * kG, 8000 * kG, 1800 * kG, 1000, 148, 256, 128,
     64},
}};

}  // namespace

std::string_view to_string(DType d) {
  switch (d) {
    case DType::kBf16:
      return "BF16";
    case DType::kFp16:
      return "FP16";
    case DType::kFp8:
      return "FP8";
    case DType::kFp32:
      return "FP32";
  }
  return "?";
}

double dtype_bytes(DType d) {
  switch (d) {
    case DType::kBf16:
    case DType::kFp16:
      return 2;
    case DType::kFp8:
      return 1;
    case DType::kFp32:
      return 4;
  }
  return 2;
}

double GpuProfile::peak_flops(DType d) const {
  switch (d) {
    case DType::kBf16:
      return peak_bf16_flops;
    case DType::kFp16:
      return peak_fp16_flops;
    case DType::kFp8:
      return peak_fp8_flops;
    case DType::kFp32:
      return peak_fp32_flops;
  }
  return 0;
}

std::span<const GpuProfile> gpu_profiles() {
  return kProfiles;
}

const GpuProfile& find_gpu_profile(std::string_view name, std::string_view field) {
  std::string known;
  for (const auto& p : kProfiles) {
    if (p.name == name) return p;
    known += known.empty() ? "" : ", ";
    known += p.name;
  }
  throw std::invalid_argument(std::string(field) + ": unknown GPU type '" + std::string(name) +
                              "' (known: " + known + ")");
}

}  // namespace warpsim::workload
