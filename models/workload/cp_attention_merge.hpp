// The HBM traffic that Transformer Engine's context-parallel ring attention adds around its fused attention
// kernels: packing K and V into the ring's send buffer, the contiguous copies of the half sequences a step
// attends with, merging each step's partial output by its log-sum-exp in the forward, and accumulating each
// step's dQ and dK/dV in the backward. The attention kernels themselves are the attention op's.
#pragma once

#include <cstdint>

namespace warpsim::workload {

struct CpMergeBytes {
  double forward = 0;   // HBM bytes of the forward pass's ring bookkeeping, per layer and micro-batch
  double backward = 0;  // the same for the backward pass
};

// One GPU's bytes for a CP group of `cp` members (cp >= 2), from its local tensors' sizes in bytes: the
// queries `q_bytes`, the attention output `out_bytes` (also dO's size) and the keys and values together
// `kv_bytes`. `causal`: Transformer Engine's load-balanced causal ring, where every step after the first
// attends with half the local queries or half the received keys and values.
CpMergeBytes cp_attention_merge_bytes(std::uint32_t cp, bool causal, double q_bytes, double out_bytes,
                                      double kv_bytes);

}  // namespace warpsim::workload
