// How a fused-attention op calls its kernel (mask, keys per call, head dimension), carried on the op (like
// GemmShape) so that the compute model can charge what the kernel executes and the rate it runs at for that
// call (compute_model.hpp). Kept apart from the op vocabulary (ops.hpp) because both the ops and the compute
// model's input (ComputeWork) carry it.
#pragma once

namespace warpsim::workload {

// causal_keys == 0: no mask (every query attends to every key; also every unfused or non-attention op).
// causal_keys > 0: a causal (decoder) mask. A causal fused kernel skips the key blocks above the diagonal:
// the op then carries the FLOPs it executes (half the unmasked ones), and the mask tells the compute model
// that they run at the GPU's measured causal rate, which depends on how many keys one kernel call spans
// (the diagonal blocks and the uneven work per query block). With context parallelism the attention runs
// as `cp_steps` kernel calls of causal_keys keys each (Transformer Engine's load-balanced ring: one call is
// the causal diagonal, the others unmasked half blocks).
// head_dim: the kernel's head dimension (query/key and value alike), whose rate the GPU profile gives at
// 64, 128 and 256; 0 = unknown or unequal query and value widths (MLA's 192/128), charged at the head
// dimension 128 rate.
// dropout: the kernel applies dropout to the probabilities, at the rate the GPU profile gives for that.
struct AttentionCall {
  double causal_keys = 0;
  double cp_steps = 1;
  double head_dim = 0;
  // Dropout on the attention probabilities inside the fused kernel (training with attention_dropout > 0).
  bool dropout = false;

  bool causal() const { return causal_keys > 0; }
  bool operator==(const AttentionCall&) const = default;
};

}  // namespace warpsim::workload
