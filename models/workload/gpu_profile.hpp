// Shipped GPU profiles used by the compute-time model: datasheet peaks plus the kernel-level efficiencies
// measured on each GPU generation (KernelEfficiency). Sources of every value are in docs/gpu-profiles.md;
// keep the two in sync.
#pragma once

#include <array>
#include <iterator>

#include <span>
#include <string>
#include <string_view>

namespace warpsim::workload {

enum class DType { kBf16, kFp16, kFp8, kFp32 };

std::string_view to_string(DType d);
double dtype_bytes(DType d);
// The dtype a job of model dtype `d` keeps its weights, activations, gradients and communication in: an FP8
// job (Transformer Engine's recipe) runs only its GEMMs in FP8 and everything else in BF16
// (docs/workload.md).
DType storage_dtype(DType d);

// What each class of kernel sustains on one GPU generation, from public kernel-level measurements
// (docs/gpu-profiles.md cites each value). "Burst" values were measured in short benchmark runs, in which the
// GPU holds its boost clock; a training step keeps the tensor cores busy for seconds at the power limit,
// where the clock falls to the sustained clock. `sustain` is that loss, measured as the ratio of the
// sustained (power-saturated) to the burst throughput of the same large GEMM, and applies to every tensor-
// core kernel class below. Nothing here is fitted to an end-to-end training result.
// A causal attention kernel's rate over the same kernel's without a mask (both in the usual FLOP convention:
// causal counts half the unmasked FLOPs), measured at 512, 1k, 2k, 4k, 8k and 16k keys per call.
inline constexpr double kCausalKeys[] = {512, 1024, 2048, 4096, 8192, 16384};
using CausalRatio = std::array<double, std::size(kCausalKeys)>;
// A fused attention kernel's rate at head dimensions 64, 128 and 256 over its rate at 128 (the head
// dimension of attn_fwd / attn_bwd), measured without a mask at 8k tokens.
inline constexpr double kAttentionHeadDims[] = {64, 128, 256};
using HeadDimFactors = std::array<double, std::size(kAttentionHeadDims)>;

struct KernelEfficiency {
  double boost_clock_mhz;      // SM clock the datasheet tensor peak assumes
  double sustained_clock_mhz;  // measured SM clock of a large GEMM held at the power limit (documentation)
  double sustain;              // sustained / burst throughput of one large GEMM, (0, 1]
  double gemm_bf16;            // large GEMM, burst, fraction of the dense BF16/FP16 peak
  double gemm_fp8;             // large GEMM, burst, fraction of the dense FP8 peak (0: no FP8)
  double attn_fwd;             // flash-attention forward, burst, fraction of the BF16 peak
  double attn_bwd;             // flash-attention backward, burst, fraction of the BF16 peak (FLOPs counted
                               // as FlashAttention does: 2.5x the forward, i.e. with the recomputed scores)
  double memory;               // streaming kernels, fraction of the datasheet HBM bandwidth
  double kernel_gap_s;         // fixed time per kernel: launch and tail, seconds
  CausalRatio causal;          // fused attention under a causal mask: rate over the unmasked rate
  // Fused attention forward / backward by head dimension, over the head dimension 128 rate (1: not measured).
  HeadDimFactors attn_fwd_head_dim{1, 1, 1};
  HeadDimFactors attn_bwd_head_dim{1, 1, 1};
  // Fused attention forward + backward time with dropout on the probabilities over its time without (1: not
  // measured).
  double attn_dropout = 1;
  // GEMM depth K0: a GEMM of depth K runs at 1 / (1 + K0 / K) of the large-GEMM rate, the fixed per-tile
  // cost (prologue, epilogue) against a main loop that grows with K (compute_model.hpp; 0: not measured).
  double gemm_k_half = 0;

  // Sustained large-GEMM efficiency for `d` (fraction of that dtype's dense peak).
  double gemm(DType d) const { return sustain * (d == DType::kFp8 ? gemm_fp8 : gemm_bf16); }
};

// Multipliers on a KernelEfficiency's measured values, for sensitivity studies (the spec's
// job.compute_model.scale, `warpsim validate --perturb`); 1 = the measured value. They never change a
// shipped profile: the compute model applies them to its own copy (scaled() below).
struct KernelScales {
  double gemm_eff = 1;         // gemm_bf16 and gemm_fp8 (the large-GEMM efficiencies; not flash attention)
  double sustained_clock = 1;  // sustain (and sustained_clock_mhz): every tensor-core kernel class
  double hbm_eff = 1;          // memory
  double kernel_gap = 1;       // kernel_gap_s
};

// `k` with `s` applied.
KernelEfficiency scaled(KernelEfficiency k, const KernelScales& s);

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
  KernelEfficiency kernels;

  double peak_flops(DType d) const;
};

// All shipped profiles.
std::span<const GpuProfile> gpu_profiles();
// Looks a profile up by name (case-sensitive); throws std::invalid_argument naming `field` and listing the
// known names when absent.
const GpuProfile& find_gpu_profile(std::string_view name, std::string_view field = "gpu_type");

}  // namespace warpsim::workload
