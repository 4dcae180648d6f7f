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
  DType dtype = DType::kBf16;
  bool gated_mlp = false, linear_bias = false, rms_norm = false, learned_pos = false, untied = false;
  bool fused_attention = false;

  bool moe() const { return experts > 1; }
  std::uint64_t head_dim() const { return hidden / heads; }
  static ModelShape from_params(const ModelParams& m);
};

struct Degrees {
  std::uint32_t tp = 1, pp = 1, dp = 1, cp = 1, ep = 1, vpp = 1, zero = 0;
  bool sequence_parallel = false;
  bool interleaved = false;
  bool pp_scatter_gather = false;  // TP > 1, no sequence parallelism, pipeline_scatter_gather set
  bool pp_sync = false;            // PP > 1, pipeline_p2p_sync set: each pipeline send blocks until sent
  static Degrees from_params(const ParallelismParams& p);
};

// Parameter counts (whole model, unsharded).
struct ParamCounts {
  double attention = 0;  // per layer, incl. biases
  double mlp_dense = 0;  // per layer, dense MLP (0 for MoE)
  double experts = 0;    // per layer, all experts (0 for dense)
  double router = 0;     // per layer
  double norms = 0;      // per layer
  double embedding = 0;  // token (+ learned position) embedding
  double output = 0;     // untied output projection (0 when tied)
  double final_norm = 0;
  double per_layer() const { return attention + mlp_dense + experts + router + norms; }
  double total(std::uint64_t layers) const { return per_layer() * layers + embedding + output + final_norm; }
  // Parameters one token touches (top-k of the experts); equals total for dense models.
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
  CollectiveKind collective = CollectiveKind::kAllReduce;
  GroupKind group = GroupKind::kTensor;
  std::uint64_t comm_bytes = 0;
};

struct LayerOps {
  std::vector<LayerOp> forward;   // one layer, one micro-batch, in execution order
  std::vector<LayerOp> backward;  // incl. the recomputed forward (full) or attention core (selective)
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
// 6 * N * tokens + attention 12 * layers * seq^2 * hidden * sequences (full, non-causal scores), where N is
// the active parameter count without the embedding lookup tables (a tied table counts once, as the output
// projection; position embeddings and an untied input table do no matrix multiplies).
double analytic_step_flops(const ModelShape& s, std::uint64_t global_batch_sequences);

}  // namespace warpsim::workload
