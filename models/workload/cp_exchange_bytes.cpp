// Byte counts follow the tensors of Transformer Engine's context-parallel attention
// (transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py:
// AttnFuncWithCPAndKVAllGather, AttnFuncWithCPAndQKVOA2A and flash_attn_a2a_communicate), docs/workload.md
// "Context-parallel communication types". A copy reads and writes its bytes once each (2x), an in-place add
// reads both operands and writes one (3x), a fill writes once (1x).
#include "models/workload/cp_exchange_bytes.hpp"

namespace warpsim::workload {

CpExchangeBytes cp_exchange_bytes(CpCommType type, std::uint32_t cp, bool causal, double q, double k,
                                  double v, double out) {
  const double n = cp;
  const double kv = k + v;
  CpExchangeBytes b;
  switch (type) {
    case CpCommType::kP2p:
      break;
    case CpCommType::kAllGather: {
      // Rank r's query chunks r and 2cp-1-r attend keys [0, (r+1) c) and [0, (2cp-r) c), c = half its
      // tokens: (2cp+1)/2 of its K/V size together, whatever r; without a mask, the whole gathered K/V each.
      const double attended = causal ? (2 * n + 1) / 2 * kv : 2 * n * kv;
      b.forward_before = 2 * n * kv;            // index_select of the gathered K and V
      b.forward_after = 2 * out;                // the two chunks' outputs copied into one tensor
      b.backward_before = 2 * n * kv + n * kv;  // K and V gathered again and reordered; dK, dV zero-filled
      b.backward_after = 2 * q + 3 * attended + 2 * n * kv;  // dQ halves copied, dK/dV added, reordered back
      break;
    }
    case CpCommType::kAllToAll:
      // Q, K and V each copied before and after their all-to-all, the output likewise on its way back; the
      // backward sends dO forward the same way and dQ, dK, dV back.
      b.forward_before = 4 * (q + kv);
      b.forward_after = 4 * out;
      b.backward_before = 4 * out;
      b.backward_after = 4 * (q + kv);
      break;
  }
  return b;
}

AttentionCall cp_causal_attention_call(CpCommType type, double seq, std::uint32_t cp) {
  const double n = cp;
  switch (type) {
    case CpCommType::kAllGather:
      return {seq / (2 * n), 2 * n};
    case CpCommType::kAllToAll:
      return {seq, 1};
    case CpCommType::kP2p:
      break;
  }
  return {seq / n, n};
}

}  // namespace warpsim::workload
