// Transformer arithmetic: parameter counts and the per-GPU op decomposition of one layer (and of the
// embedding / output head) under tensor, context and expert parallelism. Pure functions of the shape and
// degrees; the schedule (pipeline.hpp) and program generator (gpu_program.hpp) place these ops in time.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "models/workload/gpu_profile.hpp"
#include "models/workload/job_params.hpp"
#include "models/workload/ops.hpp"

namespace warpsim::workload {

struct ModelShape {
  std::uint64_t layers = 0, hidden = 0, ffn = 0, heads = 0, kv_heads = 0, seq = 0, vocab = 0;
  std::uint64_t experts = 1, top_k = 1;
  // DeepSeek-style MoE (job_params.hpp): routed expert width, shared experts, leading dense layers.
  std::uint64_t moe_ffn = 0;  // each routed expert's FFN width (from_params: ffn when unset)
  std::uint64_t shared_experts = 0, shared_ffn = 0;
  std::uint64_t dense_layers = 0;  // the first dense_layers layers have a dense MLP of ffn (MoE only)
  // Multi-head latent attention (on when kv_lora > 0).
  std::uint64_t q_lora = 0, kv_lora = 0, qk_nope = 0, qk_rope = 0, v_dim = 0;
  double routing_skew = 0;
  std::uint64_t routing_seed = 0;
  DType dtype = DType::kBf16;
  bool gated_mlp = false, linear_bias = false, rms_norm = false, learned_pos = false, untied = false;
  bool fused_attention = false;
  bool causal_attention = true;  // decoder self-attention: fused kernels skip the masked half
  double attention_dropout = 0, hidden_dropout = 0;  // training dropout probabilities (job_params.hpp)
  bool fused_cross_entropy = false;                  // Megatron-Core's --cross-entropy-loss-fusion

  bool moe() const { return experts > 1; }
  bool mla() const { return kv_lora > 0; }
  // Whether global layer `layer` has a dense MLP (every layer of a dense model; the leading ones of an MoE).
  bool dense_layer(std::uint64_t layer) const { return !moe() || layer < dense_layers; }
  std::uint64_t head_dim() const { return hidden / heads; }
  // Per-head query/key and value widths: head_dim for multi-head/grouped-query attention; MLA's
  // qk_nope + qk_rope and v_head_dim.
  std::uint64_t qk_head_dim() const { return mla() ? qk_nope + qk_rope : head_dim(); }
  std::uint64_t v_head_dim() const { return mla() ? v_dim : head_dim(); }
  static ModelShape from_params(const ModelParams& m);
};

struct Degrees {
  std::uint32_t tp = 1, pp = 1, dp = 1, cp = 1, ep = 1, vpp = 1, zero = 0;
  bool sequence_parallel = false;
  bool interleaved = false;
  // ZB-H1: each backward is split into an input-gradient pass and a weight-gradient pass (LayerOps).
  bool split_backward = false;
  // DualPipe: two chunks per rank (vpp = 2), stages of two model copies run in opposite directions.
  bool dual_pipe = false;
  bool pp_scatter_gather = false;  // TP > 1, no sequence parallelism, pipeline_scatter_gather set
  bool pp_sync = false;            // PP > 1, pipeline_p2p_sync set: each pipeline send blocks until sent
  CpCommType cp_comm = CpCommType::kP2p;  // CP > 1: how the attention's inputs are exchanged
  static Degrees from_params(const ParallelismParams& p);
};

// Parameter counts (whole model, unsharded). An MoE model's first `first_dense_layers` layers carry
// first_dense_mlp instead of the experts, shared experts and router.
struct ParamCounts {
  double attention = 0;        // per layer, incl. biases (MLA: its two low-rank norms too)
  double mlp_dense = 0;        // per layer, dense MLP (0 for MoE)
  double experts = 0;          // per MoE layer, all routed experts (0 for dense)
  double shared_experts = 0;   // per MoE layer, the shared experts
  double router = 0;           // per MoE layer
  double norms = 0;            // per layer
  double first_dense_mlp = 0;  // per leading dense layer of an MoE model
  std::uint64_t first_dense_layers = 0;
  double embedding = 0;  // token (+ learned position) embedding
  double output = 0;     // untied output projection (0 when tied)
  double final_norm = 0;
  // One MoE layer (or one layer of a dense model).
  double per_layer() const { return attention + mlp_dense + experts + shared_experts + router + norms; }
  double dense_first_layer() const { return attention + norms + first_dense_mlp; }
  double total(std::uint64_t layers) const {
    return per_layer() * static_cast<double>(layers - first_dense_layers) +
           dense_first_layer() * static_cast<double>(first_dense_layers) + embedding + output + final_norm;
  }
  // Parameters one token touches (top-k of the routed experts); equals total for dense models.
  double active(std::uint64_t layers, std::uint64_t experts_n, std::uint64_t top_k) const;
};
ParamCounts count_params(const ModelShape& s);

// One op of a layer (or of the head/embedding) on one GPU, before placement in the schedule.
struct LayerOp {
  OpKind kind = OpKind::kCompute;  // kCompute, kCollective or (step end) kDataRead
  Phase phase = Phase::kForward;   // kForward, kRecompute or kBackward
  std::string_view name;
  double flops = 0, bytes = 0;
  DType dtype = DType::kBf16;
  GemmShape gemm;  // kCompute GEMMs: the shape (compute_model.hpp charges tile/wave quantization from it)
  KernelKind kernel = KernelKind::kMatmul;
  AttentionCall attention;  // fused attention: its mask and head dimension (attention_call.hpp)
  CollectiveKind collective = CollectiveKind::kAllReduce;
  GroupKind group = GroupKind::kTensor;
  std::uint64_t comm_bytes = 0;
  // Routed-expert work (moe_routing.hpp): 0 none; compute ops scale their token-proportional work by the
  // GPU's routed share; all-to-alls carry per-peer volumes: kRouteDispatch towards the experts' GPUs,
  // kRouteCombine back from them.
  std::uint8_t route = 0;
  double route_fixed_bytes = 0;  // compute: the bytes that do not scale with tokens (the expert weights)
};

struct LayerOps {
  std::vector<LayerOp> forward;   // one layer, one micro-batch, in execution order
  std::vector<LayerOp> backward;  // incl. the recomputed forward (full) or attention core (selective)
  // Degrees::split_backward (ZB-H1): `backward` holds only the input-gradient (B) work, each weight GEMM's
  // dgrad half named *_dgrad, and the weight gradients (each weight GEMM's wgrad half, named *_wgrad, and
  // ZeRO-3's gradient reduce-scatters) are here, for the schedule's W pass. Empty otherwise.
  std::vector<LayerOp> weight_grad, dense_weight_grad;
  // An MoE model's leading dense layers (ModelShape::dense_layers; empty otherwise): the same layer with a
  // dense MLP of ffn, and its parameter shares.
  std::vector<LayerOp> dense_forward, dense_backward;
  double first_dense_layer_params_per_gpu = 0;                 // all non-expert (reduced over DP x CP)
  std::vector<LayerOp> head_forward, head_backward;            // final norm + output GEMM + loss
  std::vector<LayerOp> embedding_forward, embedding_backward;  // token (+ position) embedding
  double layer_params_per_gpu = 0;         // this GPU's share of one layer's parameters (TP/EP shard)
  double dense_layer_params_per_gpu = 0;   // of which non-expert (reduced over DP x CP)
  double expert_layer_params_per_gpu = 0;  // of which expert (reduced over the expert-data group)
  double embedding_params_per_gpu = 0, head_params_per_gpu = 0;
  std::uint64_t activation_bytes = 0;  // pipeline p2p message per micro-batch
};

// Ops for one micro-batch of `micro_batch` sequences on one GPU. Full recomputation repeats the layer's whole
// forward (its collectives included) before the backward; selective repeats the attention core (the ops
// between the QKV projection and the output projection: scores, softmax, dropout, attention over V, or the
// fused attention kernel, and with CP its K/V ring), as Megatron-LM's --recompute-granularity selective does.
LayerOps build_layer_ops(const ModelShape& s, const Degrees& d, std::uint64_t micro_batch,
                         RecomputeMode recompute);

// Model FLOPs per step as the usual closed form counts them (forward + backward, no recomputation):
// 6 * N * tokens + attention 12 * layers * seq^2 * hidden * sequences, where N is the active parameter count
// without the embedding lookup tables (a tied table counts once, as the output projection; position
// embeddings and an untied input table do no matrix multiplies). A causal model's attention counts half
// (the products below the diagonal, as NeMo 2's and Llama 3's counts do) unless `unmasked_attention`
// (every score, as NeMo 24.07's and Megatron-LM's 2021-2022 formulas count).
double analytic_step_flops(const ModelShape& s, std::uint64_t global_batch_sequences,
                           bool unmasked_attention = false);

}  // namespace warpsim::workload
