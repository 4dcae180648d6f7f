// Byte counts follow the tensors of Transformer Engine's P2P context-parallel attention (the autograd
// function AttnFuncWithCP in transformer_engine/pytorch/attention.py of the TE 1.x releases of 2024, later
// AttnFuncWithCPAndKVP2P in attention/dot_product_attention/context_parallel.py), docs/workload.md
// "Context-parallel ring bookkeeping". A copy reads and writes its bytes once each (2x); an in-place add
// reads both operands and writes one (3x).
#include "models/workload/cp_attention_merge.hpp"

namespace warpsim::workload {

CpMergeBytes cp_attention_merge_bytes(std::uint32_t cp, bool causal, double q_bytes, double out_bytes,
                                      double kv_bytes) {
  const double later = cp - 1.0;  // ring steps after the local (diagonal) one
  CpMergeBytes b;
  // Forward: K and V concatenated into the first send buffer (copy), the output zero-filled (write), then
  // per step out += out_step * exp(lse_step - lse) (read out_step, read and write out).
  b.forward = 2 * kv_bytes + out_bytes + 3 * out_bytes;
  // Backward: K and V copied into the ring's double buffer; per step, dK and dV concatenated (copy) and
  // added to the buffer travelling back (add), dQ added to the local gradient (the first step copies).
  b.backward = 2 * kv_bytes + 2 * q_bytes + 2 * kv_bytes + 3 * kv_bytes;
  if (causal) {
    // Later steps: on half the ranks the step takes the first half of the received K/V (a contiguous copy,
    // full queries), on the other half the second half of the local queries (copied, full K/V). Averaged:
    // forward, half a K/V copy and half a Q copy, and the merge over all or half the output rows (3 or 1.5
    // passes); backward, the half-query steps copy Q, O and dO halves, the half-K/V steps copy the K/V half,
    // dQ is added over all or half the rows and dK/dV over half or all of K/V.
    b.forward += later * (0.5 * (kv_bytes + q_bytes) + 0.5 * (3 + 1.5) * out_bytes);
    b.backward += later * (0.5 * (q_bytes + 2 * out_bytes) + 0.5 * kv_bytes + 0.5 * (3 + 1.5) * q_bytes +
                           0.5 * (2 + 1) * kv_bytes + 0.5 * (3 + 1.5) * kv_bytes);
  } else {
    // Every step attends with all local queries and the whole received K/V.
    b.forward += later * 3 * out_bytes;
    b.backward += later * (3 * q_bytes + 2 * kv_bytes + 3 * kv_bytes);
  }
  return b;
}

}  // namespace warpsim::workload
