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
// The kernel efficiencies (last block of each row) are measured values, each cited in docs/gpu-profiles.md
// ("Kernel efficiencies"); the ratios below are written as measured TFLOP/s over peak so they can be
// checked against the cited tables.
constexpr double kGap = 4e-6;  // per-kernel launch + tail (docs/gpu-profiles.md, "Kernel gap")

// A100: burst GEMM = MAMF 271.2 / 312; sustained = cuBLAS 8192^3 with random data at 400 W, 258 TFLOP/s,
// so sustain = 258 / 271.2. Attention is FlashAttention-2 (what Transformer Engine runs before Hopper):
// forward 73 % of peak (its paper); backward from its A100 forward+backward benchmark (head dim 128, no
// mask, 16k tokens: 203 TFLOP/s in 3.5 forward units) less that forward. Causal over unmasked, the same
// benchmark's forward+backward at 1k-16k (133/173, 155/187, 173/196, 182/201, 189/203; at 512 the head-dim
// 128 bar is hidden, so head dim 64's 88/132). By head dimension, the same benchmark's forward+backward at 8k
// tokens without a mask: 175 (64) against 201 (128), applied to the forward and the backward alike (the
// figure does not split them, and a common factor reproduces its sum); head dim 256 is not in it (1).
constexpr double kA100AttnFwd = 0.73;
constexpr double kA100AttnBwd = 2.5 / (3.5 / 203.0 - 1.0 / (kA100AttnFwd * 312)) / 312;
constexpr CausalRatio kFlash2A100Causal{88.0 / 132,  133.0 / 173, 155.0 / 187,
                                        173.0 / 196, 182.0 / 201, 189.0 / 203};
constexpr HeadDimFactors kFlash2A100HeadDim{175.0 / 201, 1, 1};
// A100 GEMM depth: no clean K series like OpenXLA's exists for sm_80. Vidur's A100 80GB profiles (microsoft/
// vidur, data/profiling/compute/a100/meta-llama/Meta-Llama-3-8B/mlp.csv, FP16 PyTorch linears, torch-profiler
// medians) time the attention output projection (N = 4096) at K = 4096 / TP for TP 1, 2, 4, 8 and 193 token
// counts from 4096 to 32768: averaged, 216.2, 204.4, 212.1 and 193.0 TFLOP/s at K = 4096, 2048, 1024, 512.
// K0 is the least-squares fit of r(4096) / r(K) = (1 + K0 / K) / (1 + K0 / 4096) over all those points (the
// series is not monotonic, so no single pair fixes it). The same fit of the same source's H100 series
// (Llama-2-7b-hf) gives 125.8, against OpenXLA's 129.4 (docs/gpu-profiles.md, "GEMM depth").
constexpr double kA100GemmKHalf = 67.9;
constexpr KernelEfficiency kA100{1410,
                                 1305,
                                 258.0 / 271.2,
                                 271.2 / 312,
                                 0.0,
                                 kA100AttnFwd,
                                 kA100AttnBwd,
                                 0.85,
                                 kGap,
                                 kFlash2A100Causal,
                                 kFlash2A100HeadDim,
                                 kFlash2A100HeadDim,
                                 1,  // fused attention's dropout: not measured on A100
                                 kA100GemmKHalf};
// Hopper sustain: H200 bf16 MSMF / MAMF with all 8 GPUs busy, 698.6 / 823.9 (same GH100 die and 700 W as
// H100 SXM). Attention is cuDNN's fused attention, which Transformer Engine prefers over FlashAttention on
// Hopper and later: FlashAttention-3 paper, Figures 5-6 (H100 SXM5, BF16, head dim 128, 8k tokens, no
// mask): forward 600, backward 518 TFLOP/s; causal over unmasked forward 315/497, 410/574, 484/617, 518/609,
// 529/600, 539/595 at 512-16k (the backward is assumed to keep the forward's ratio).
// By head dimension, the same figures at 8k tokens without a mask: forward 412 (64) and 580 (256) against
// 600; backward 432 (64) against 518, and no backward at 256 is published: the forward's factor is assumed.
constexpr double kHopperSustain = 698.6 / 823.9;
constexpr CausalRatio kCudnnCausal{315.0 / 497, 410.0 / 574, 484.0 / 617,
                                   518.0 / 609, 529.0 / 600, 539.0 / 595};
constexpr HeadDimFactors kCudnnFwdHeadDim{412.0 / 600, 1, 580.0 / 600};
constexpr HeadDimFactors kCudnnBwdHeadDim{432.0 / 518, 1, 580.0 / 600};
// Dropout 0.1 on the probabilities, cuDNN fused attention through Transformer Engine in the sbhd layout
// Megatron uses, forward + backward, head dim 128, 4 x 4096 tokens, 16 heads (TransformerEngine issue #3312):
// H200 0.614 against 0.594 ms, B300 0.525 against 0.480 ms.
constexpr double kHopperAttnDropout = 0.614 / 0.594;
constexpr double kBlackwellAttnDropout = 0.525 / 0.480;
// GEMM depth K0 from OpenXLA's measured matmul table (xla/backends/gpu/cost_model/
// matmul_interpolator_data.h): the 4 x 4096 x 4096 x K series at K = 4096 and 1024 fixes K0 in
// r(K) = r_inf / (1 + K0 / K). sm_90 (H100 80GB HBM3), BF16: 788.7 and 722.3 TFLOP/s -> 129.4; its FP8
// entries exceed the FP8 peak and are not used: Hopper FP8 is assumed to share BF16's K0, as it does on
// sm_100 (B200), where BF16 (1670.5, 1350.5) and FP8 (3279.7, 2651.2) give 351.2 and 351.4.
constexpr double kHopperGemmKHalf = 129.4;
constexpr double kBlackwellGemmKHalf = 351.2;
constexpr KernelEfficiency kH100{
    1830, 1466, kHopperSustain, 794.5 / 989.5,    1402.6 / 1979,    600 / 989.5,        518 / 989.5,
    0.85, kGap, kCudnnCausal,   kCudnnFwdHeadDim, kCudnnBwdHeadDim, kHopperAttnDropout, kHopperGemmKHalf};
constexpr KernelEfficiency kH200{
    1830, 1466, kHopperSustain, 823.9 / 989.5,    1453.4 / 1979,    600 / 989.5,        518 / 989.5,
    0.85, kGap, kCudnnCausal,   kCudnnFwdHeadDim, kCudnnBwdHeadDim, kHopperAttnDropout, kHopperGemmKHalf};
// B200: sustain = bf16 MSMF / MAMF with all 8 GPUs busy, 1426.4 / 1751.2. No public attention measurement on
// Blackwell was found: Hopper's cuDNN fractions are used (docs/gpu-profiles.md). Dropout's cost is the one
// Blackwell measurement found, on B300 (sm103; B200 is sm100).
constexpr KernelEfficiency kB200{1965,
                                 1320,
                                 1426.4 / 1751.2,
                                 1751.2 / 2250,
                                 3432.5 / 4500,
                                 600 / 989.5,
                                 518 / 989.5,
                                 0.85,
                                 kGap,
                                 kCudnnCausal,
                                 kCudnnFwdHeadDim,
                                 kCudnnBwdHeadDim,
                                 kBlackwellAttnDropout,
                                 kBlackwellGemmKHalf};

constexpr std::array<GpuProfile, 5> kProfiles{{
    {"A100-80GB", 312 * kT, 312 * kT, 0.0, 19.5 * kT, 80 * kG, 2039 * kG, 600 * kG, 400, 108, 256, 128, 64,
     kA100},
    {"H100-SXM", 989.5 * kT, 989.5 * kT, 1979 * kT, 67 * kT, 80 * kG, 3350 * kG, 900 * kG, 700, 132, 256, 128,
     64, kH100},
    // H800 SXM: the H100 SXM's GH100 compute, HBM and power with NVLink cut to 400 GB/s total (export
    // variant; docs/gpu-profiles.md). Its kernels run as the H100's.
    {"H800", 989.5 * kT, 989.5 * kT, 1979 * kT, 67 * kT, 80 * kG, 3350 * kG, 400 * kG, 700, 132, 256, 128, 64,
     kH100},
    {"H200", 989.5 * kT, 989.5 * kT, 1979 * kT, 67 * kT, 141 * kG, 4800 * kG, 900 * kG, 700, 132, 256, 128,
     64, kH200},
    {"B200", 2250 * kT, 2250 * kT, 4500 * kT, 80 * kT, 180 * kG, 8000 * kG, 1800 * kG, 1000, 148, 256, 128,
     64, kB200},
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

DType storage_dtype(DType d) {
  return d == DType::kFp8 ? DType::kBf16 : d;
}

KernelEfficiency scaled(KernelEfficiency k, const KernelScales& s) {
  k.gemm_bf16 *= s.gemm_eff;
  k.gemm_fp8 *= s.gemm_eff;
  k.sustain *= s.sustained_clock;
  k.sustained_clock_mhz *= s.sustained_clock;
  k.memory *= s.hbm_eff;
  k.kernel_gap_s *= s.kernel_gap;
  return k;
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
