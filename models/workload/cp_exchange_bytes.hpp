// The HBM traffic that Transformer Engine's all-gather and all-to-all context parallelism add around the
// fused attention kernel (the copies that reorder the load-balanced sequence chunks, the output and dQ
// copies, the dK/dV accumulation), and how the kernel is called under each CP type. The P2P ring's
// bookkeeping is cp_attention_merge.hpp's; the collectives themselves are the layer's ops (transformer.cpp).
#pragma once

#include <cstdint>

#include "models/workload/attention_call.hpp"
#include "models/workload/job_params.hpp"

namespace warpsim::workload {

// HBM bytes per GPU, layer and micro-batch, on either side of the attention kernel in each pass.
struct CpExchangeBytes {
  double forward_before = 0, forward_after = 0;    // around the forward kernel
  double backward_before = 0, backward_after = 0;  // around the backward kernel
};

// This GPU's local tensors in bytes (q, k, v: its queries, keys and values; out: the attention output, also
// dO's size) for a CP group of `cp` members (cp >= 2), in Megatron-Core's sbhd layout (whose sequence-first
// views need no copy). kAllGather (AttnFuncWithCPAndKVAllGather): the gathered K/V reordered from rank order
// into sequence order (index_select, before the forward and again before the backward), the two query
// chunks' outputs copied into one tensor, dK/dV zero-filled, each chunk's dK/dV added into the key range it
// attended (`causal`: keys up to the chunk's end, otherwise the whole sequence), dQ's halves copied and the
// summed dK/dV reordered back before their reduce-scatter. kAllToAll (AttnFuncWithCPAndQKVOA2A): every
// tensor that crosses an all-to-all is copied once on each side of it (a movedim to make each peer's part
// contiguous, an index_select of the sequence chunks). kP2p: none (cp_attention_merge.hpp).
CpExchangeBytes cp_exchange_bytes(CpCommType type, std::uint32_t cp, bool causal, double q, double k,
                                  double v, double out);

// How the fused attention kernel runs under causal masking for a CP type, per `seq`-token sequence: P2P,
// cp ring steps of seq/cp keys of which one is the causal diagonal; all-gather, each rank's two query chunks
// of seq/(2 cp) tokens against all keys up to their end (bottom-right causal: only the last seq/(2 cp) keys
// are masked, 1/(2 cp) of the work); all-to-all, one causal call over the whole sequence.
AttentionCall cp_causal_attention_call(CpCommType type, double seq, std::uint32_t cp);

}  // namespace warpsim::workload
