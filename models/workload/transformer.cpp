// Transformer parameter counts and per-GPU layer op decomposition (see transformer.hpp).
#include "models/workload/transformer.hpp"

#include <stdexcept>
#include <utility>

#include "models/workload/cp_attention_merge.hpp"
#include "models/workload/cp_exchange_bytes.hpp"

namespace warpsim::workload {

namespace {

// A forward compute op with the name its backward twin takes; bwd_bytes >= 0 replaces the backward's default
// HBM traffic (twice the forward's).
struct Proto {
  LayerOp op;
  std::string_view backward_name;
  double bwd_bytes = -1;
  bool weights = false;        // a GEMM with a weight matrix (its backward has a wgrad half)
  bool backward_only = false;  // no forward (or recompute) op: `op` is already the backward op
};

class Builder {
 public:
  explicit Builder(DType dtype)
      : gemm_dtype_(dtype), dtype_(storage_dtype(dtype)), e_(dtype_bytes(dtype_)), eg_(dtype_bytes(dtype)) {}

  // Y[m x n] = X[m x k] W[k x n]. `low_precision` false keeps an FP8 job's GEMM in BF16 (the output layer
  // and the router are not Transformer Engine modules in Megatron-LM). `cast_input`: an FP8 GEMM whose
  // input is not produced in FP8 by a fused LayerNorm needs a cast(-transpose) kernel first.
  void gemm(std::string_view f, std::string_view b, double m, double k, double n, bool low_precision = true,
            bool cast_input = false) {
    const bool fp8 = low_precision && gemm_dtype_ == DType::kFp8;
    if (fp8) fp8_casts(cast_input ? m * k : 0, m * n);
    LayerOp op;
    op.name = f;
    op.flops = 2 * m * k * n;
    // Inputs in the GEMM's dtype, the output in the storage dtype.
    op.bytes = (fp8 ? eg_ : e_) * (m * k + k * n) + e_ * m * n;
    op.dtype = fp8 ? gemm_dtype_ : dtype_;
    op.gemm = {m, n, k};
    ops.push_back({op, b, -1, true});
    if (wgrad_gather_bytes_ > 0) {
      // Placed after the GEMM's forward, so that in the reversed backward it comes just before the GEMM's
      // backward, whose weight gradient needs the gathered input.
      backward_only_collective("tp_allgather", CollectiveKind::kAllGather, GroupKind::kTensor,
                               wgrad_gather_bytes_);
      wgrad_gather_bytes_ = 0;
    }
  }
  // Sequence parallelism: the next GEMM (the column-parallel one after the all-gather) saves only this
  // rank's sequence shard of its input, so its backward all-gathers the input again for the weight gradient
  // (Megatron-LM, LinearWithGradAccumulationAndAsyncCommunication.backward with sequence_parallel;
  // Transformer Engine's qkv_dgrad/fc1_dgrad userbuffers do the same all-gather).
  void gather_input_again_in_backward(double bytes) { wgrad_gather_bytes_ = bytes; }
  // A GEMM-like op with explicit work (batched/grouped GEMMs: attention, experts). `shape` is the one
  // product of the batch (default: no shape, e.g. fused attention, which is not a plain GEMM). Grouped
  // expert GEMMs run in the job's GEMM dtype (`low_precision`); attention stays in the storage dtype.
  void matmul(std::string_view f, std::string_view b, double flops, double elements, GemmShape shape = {},
              KernelKind kernel = KernelKind::kMatmul, bool low_precision = false, double routed_fixed = -1) {
    LayerOp op;
    op.name = f;
    if (routed_fixed >= 0) {
      op.route = kRouteCompute;
      op.route_fixed_bytes = e_ * routed_fixed;
    }
    op.flops = flops;
    op.bytes = e_ * elements;
    op.dtype = low_precision ? gemm_dtype_ : dtype_;
    op.gemm = shape;
    op.kernel = kernel;
    ops.push_back({op, b, -1, routed_fixed >= 0});
  }
  // Memory-bound op over `elements` values, each read/written `touches` times in total.
  void elementwise(std::string_view f, std::string_view b, double elements, double touches) {
    elementwise_bytes(f, b, e_ * elements * touches, -1, elements);
  }
  // Memory-bound op with explicit HBM bytes forward and (>= 0) backward.
  void elementwise_bytes(std::string_view f, std::string_view b, double bytes, double bwd_bytes,
                         double elements) {
    LayerOp op;
    op.name = f;
    op.flops = 4 * elements;  // a handful of FLOPs per element; negligible next to the GEMMs
    op.bytes = bytes;
    op.dtype = dtype_;
    ops.push_back({op, b, bwd_bytes});
  }
  void collective(std::string_view name, std::string_view bwd_name, CollectiveKind k, GroupKind g,
                  double bytes) {
    LayerOp op;
    op.kind = OpKind::kCollective;
    op.name = name;
    op.collective = k;
    op.group = g;
    op.comm_bytes = static_cast<std::uint64_t>(bytes);
    ops.push_back({op, bwd_name});
  }

  // A collective only the backward runs, placed where, in the reversed backward, it must come (sequence
  // parallelism's input all-gather for a weight gradient; Transformer Engine's all-gather context parallelism
  // gathers K and V again before the attention's backward).
  void backward_only_collective(std::string_view name, CollectiveKind k, GroupKind g, double bytes) {
    LayerOp op;
    op.kind = OpKind::kCollective;
    op.phase = Phase::kBackward;
    op.name = name;
    op.collective = k;
    op.group = g;
    op.comm_bytes = static_cast<std::uint64_t>(bytes);
    Proto proto{op, name};
    proto.backward_only = true;
    ops.push_back(proto);
  }

  std::vector<Proto> ops;

 private:
  // Transformer Engine's FP8 casts around one GEMM: forward, the input (when not fused into a LayerNorm)
  // cast with its transpose for the wgrad GEMM (read 2 bytes, write 1 + 1); backward, the output gradient
  // likewise. The amax reduction is part of the same kernel.
  void fp8_casts(double input_elements, double grad_elements) {
    constexpr double kCastTranspose = 2 + 1 + 1;  // bytes per element
    elementwise_bytes("fp8_cast_fwd", "fp8_cast_bwd", kCastTranspose * input_elements,
                      kCastTranspose * grad_elements, input_elements + grad_elements);
  }

  DType gemm_dtype_, dtype_;
  double e_, eg_;
  double wgrad_gather_bytes_ = 0;
};

// The backward twin of a forward op: GEMMs do dgrad + wgrad (2x FLOPs and bytes; the shape marked backward
// so the compute model quantizes the two GEMMs' own output shapes), elementwise ops read the incoming
// gradient and the saved input (2x bytes); TP all-gather and reduce-scatter swap roles; the CP ring carries
// dK,dV back as well as K,V.
LayerOp backward_of(const Proto& p) {
  LayerOp op = p.op;
  op.phase = Phase::kBackward;
  op.name = p.backward_name;
  if (op.kind == OpKind::kCompute) {
    op.flops *= 2;
    op.bytes = p.bwd_bytes >= 0 ? p.bwd_bytes : 2 * op.bytes;
    op.gemm.backward = op.gemm.valid();
    if (op.kernel == KernelKind::kAttentionFwd) op.kernel = KernelKind::kAttentionBwd;
    op.route_fixed_bytes *= 2;
    return op;
  }
  // The gradients of dispatched tokens travel back the way the combine goes, and vice versa.
  if (op.route == kRouteDispatch) {
    op.route = kRouteCombine;
  } else if (op.route == kRouteCombine) {
    op.route = kRouteDispatch;
  }
  switch (op.collective) {
    case CollectiveKind::kAllGather:
      op.collective = CollectiveKind::kReduceScatter;
      break;
    case CollectiveKind::kReduceScatter:
      op.collective = CollectiveKind::kAllGather;
      break;
    case CollectiveKind::kRingExchange:
      op.comm_bytes *= 2;
      break;
    default:
      break;
  }
  return op;
}

// The split backward's names of a weight GEMM's backward (measured-table keys, docs/workload.md).
struct SplitNames {
  std::string_view backward, dgrad, wgrad;
};
constexpr SplitNames kSplitNames[] = {
    {"qkv_bwd", "qkv_dgrad", "qkv_wgrad"},
    {"mla_q_down_bwd", "mla_q_down_dgrad", "mla_q_down_wgrad"},
    {"mla_q_up_bwd", "mla_q_up_dgrad", "mla_q_up_wgrad"},
    {"mla_q_bwd", "mla_q_dgrad", "mla_q_wgrad"},
    {"mla_kv_down_bwd", "mla_kv_down_dgrad", "mla_kv_down_wgrad"},
    {"mla_kv_up_bwd", "mla_kv_up_dgrad", "mla_kv_up_wgrad"},
    {"proj_bwd", "proj_dgrad", "proj_wgrad"},
    {"mlp_up_bwd", "mlp_up_dgrad", "mlp_up_wgrad"},
    {"mlp_down_bwd", "mlp_down_dgrad", "mlp_down_wgrad"},
    {"shared_up_bwd", "shared_up_dgrad", "shared_up_wgrad"},
    {"shared_down_bwd", "shared_down_dgrad", "shared_down_wgrad"},
    {"router_bwd", "router_dgrad", "router_wgrad"},
    {"expert_up_bwd", "expert_up_dgrad", "expert_up_wgrad"},
    {"expert_down_bwd", "expert_down_dgrad", "expert_down_wgrad"},
};

// A weight GEMM's backward split into its two GEMMs (gemm_shape.hpp): dgrad dX = dY W^T (output m x k,
// inner n) and wgrad dW = X^T dY (output k x n, inner m), each half of the FLOPs and HBM bytes (each reads
// two of X, W, dY and writes the third's gradient-sized operand), the weight bytes of a routed op likewise.
std::pair<LayerOp, LayerOp> split_backward(const LayerOp& bwd) {
  const SplitNames* names = nullptr;
  for (const auto& n : kSplitNames) {
    if (n.backward == bwd.name) names = &n;
  }
  if (names == nullptr) throw std::logic_error("split_backward: no dgrad/wgrad names for a weight GEMM");
  LayerOp dgrad = bwd, wgrad = bwd;
  dgrad.name = names->dgrad;
  wgrad.name = names->wgrad;
  for (LayerOp* o : {&dgrad, &wgrad}) {
    o->flops = bwd.flops / 2;
    o->bytes = bwd.bytes / 2;
    o->route_fixed_bytes = bwd.route_fixed_bytes / 2;
  }
  const GemmShape g = bwd.gemm;
  if (g.valid()) {
    dgrad.gemm = {g.m, g.k, g.n, g.batch, false};
    wgrad.gemm = {g.k, g.n, g.m, g.batch, false};
  }
  return {dgrad, wgrad};
}

}  // namespace

// The params' "0 = default" counts (kv heads, experts, top-k) resolve here as the spec documents them.
ModelShape ModelShape::from_params(const ModelParams& m) {
  ModelShape s;
  s.layers = m.num_layers;
  s.hidden = m.hidden_size;
  s.ffn = m.ffn_hidden_size;
  s.heads = m.num_attention_heads;
  s.kv_heads = m.num_kv_heads ? m.num_kv_heads : m.num_attention_heads;
  s.seq = m.seq_length_tokens;
  s.vocab = m.vocab_size;
  s.experts = m.num_experts ? m.num_experts : 1;
  s.top_k = s.experts > 1 ? (m.moe_top_k ? m.moe_top_k : 1) : 1;
  s.dtype = m.dtype;
  s.gated_mlp = m.gated_mlp;
  s.linear_bias = m.linear_bias;
  s.rms_norm = m.norm == Norm::kRmsNorm;
  s.learned_pos = m.learned_position_embeddings;
  s.untied = m.untied_embeddings;
  s.fused_attention = m.fused_attention;
  s.causal_attention = m.causal_attention;
  s.attention_dropout = m.attention_dropout;
  s.hidden_dropout = m.hidden_dropout;
  s.fused_cross_entropy = m.cross_entropy_loss_fusion;
  if (s.moe()) {
    s.moe_ffn = m.moe_ffn_hidden_size ? m.moe_ffn_hidden_size : m.ffn_hidden_size;
    s.shared_experts = m.num_shared_experts;
    s.shared_ffn = s.shared_experts
                       ? (m.shared_expert_ffn_hidden_size ? m.shared_expert_ffn_hidden_size : s.moe_ffn)
                       : 0;
    s.dense_layers = m.first_dense_layers;
    s.routing_skew = m.moe_routing_skew;
    s.routing_seed = m.moe_routing_seed;
  }
  if (m.kv_lora_rank > 0) {
    s.q_lora = m.q_lora_rank;
    s.kv_lora = m.kv_lora_rank;
    s.qk_nope = m.qk_nope_head_dim;
    s.qk_rope = m.qk_rope_head_dim;
    s.v_dim = m.v_head_dim;
    s.kv_heads = s.heads;  // MLA up-projects a key and a value per head
  }
  return s;
}

// The optimizations that need a dimension > 1 are switched off without it.
Degrees Degrees::from_params(const ParallelismParams& p) {
  Degrees d;
  d.tp = p.tensor_parallel;
  d.pp = p.pipeline_parallel;
  d.dp = p.data_parallel;
  d.cp = p.context_parallel;
  d.ep = p.expert_parallel;
  d.interleaved = p.pipeline_schedule == PipelineScheduleKind::kInterleaved1F1B;
  d.vpp = d.interleaved ? p.virtual_stages_per_rank : 1;
  d.dual_pipe = p.pipeline_schedule == PipelineScheduleKind::kDualPipe && d.pp > 1;
  if (d.dual_pipe) d.vpp = 2;
  d.split_backward = (p.pipeline_schedule == PipelineScheduleKind::kZeroBubbleH1 && d.pp > 1) || d.dual_pipe;
  d.zero = p.zero_stage;
  d.sequence_parallel = p.sequence_parallel && d.tp > 1;
  d.pp_scatter_gather = p.pipeline_scatter_gather && d.tp > 1 && !d.sequence_parallel && d.pp > 1;
  d.pp_sync = p.pipeline_p2p_sync && d.pp > 1;
  d.cp_comm = d.cp > 1 ? p.cp_comm_type : CpCommType::kP2p;
  return d;
}

double ParamCounts::active(std::uint64_t layers, std::uint64_t experts_n, std::uint64_t top_k) const {
  const double active_experts = experts_n > 1 ? experts * static_cast<double>(top_k) / experts_n : 0.0;
  return (per_layer() - experts + active_experts) * static_cast<double>(layers - first_dense_layers) +
         dense_first_layer() * static_cast<double>(first_dense_layers) + embedding + output + final_norm;
}

namespace {
// One (gated) MLP of width f with the shape's biases.
double mlp_params(const ModelShape& s, double f) {
  const double mats = s.gated_mlp ? 3 : 2;
  return mats * s.hidden * f + (s.linear_bias ? (mats - 1) * f + s.hidden : 0);
}
}  // namespace

ParamCounts count_params(const ModelShape& s) {
  const double h = s.hidden;
  const double norm = s.rms_norm ? h : 2 * h;
  ParamCounts c;
  if (s.mla()) {
    // DeepSeek-V2 (arXiv 2405.04434) section 2.1: W^DQ [h x q_lora] and its norm, W^UQ/W^QR [q_lora x
    // heads (nope + rope)] (or one h x heads (nope + rope) projection without query compression), W^DKV and
    // W^KR [h x (kv_lora + rope)], the latent's norm, W^UK/W^UV [kv_lora x heads (nope + v)], W^O [heads v x
    // h].
    const double a = s.heads, qk = static_cast<double>(s.qk_head_dim());
    const double q = s.q_lora ? h * s.q_lora + s.q_lora + s.q_lora * a * qk : h * a * qk;
    const double kv = h * (s.kv_lora + s.qk_rope) + s.kv_lora + s.kv_lora * a * (s.qk_nope + s.v_dim);
    c.attention = q + kv + a * s.v_dim * h;
  } else {
    const double d = s.head_dim();
    const double qkv_out = h + 2.0 * s.kv_heads * d;
    c.attention = h * qkv_out + h * h + (s.linear_bias ? qkv_out + h : 0);
  }
  if (s.moe()) {
    c.experts = mlp_params(s, s.moe_ffn ? s.moe_ffn : s.ffn) * s.experts;
    c.shared_experts = s.shared_experts ? mlp_params(s, s.shared_ffn) * s.shared_experts : 0;
    c.router = h * s.experts;
    c.first_dense_layers = s.dense_layers;
    c.first_dense_mlp = s.dense_layers ? mlp_params(s, s.ffn) : 0;
  } else {
    c.mlp_dense = mlp_params(s, s.ffn);
  }
  c.norms = 2 * norm;
  c.embedding = static_cast<double>(s.vocab) * h + (s.learned_pos ? static_cast<double>(s.seq) * h : 0);
  c.output = s.untied ? static_cast<double>(s.vocab) * h : 0;
  c.final_norm = norm;
  return c;
}

double analytic_step_flops(const ModelShape& s, std::uint64_t global_batch_sequences,
                           bool unmasked_attention) {
  const ParamCounts c = count_params(s);
  const double tokens = static_cast<double>(global_batch_sequences) * s.seq;
  // Scores (qk width) and the weighted sum of values (v width) per head, forward + backward: 6 seq^2 heads
  // (qk + v) per sequence and layer, the usual 12 seq^2 hidden when both widths are hidden / heads.
  const double attention =
      s.mla() ? 6.0 * s.layers * static_cast<double>(s.seq) * s.seq * static_cast<double>(s.heads) *
                    static_cast<double>(s.qk_head_dim() + s.v_head_dim()) * global_batch_sequences
              : 12.0 * s.layers * static_cast<double>(s.seq) * s.seq * s.hidden * global_batch_sequences;
  // A causal model needs only the products below the diagonal: half.
  const double masked = s.causal_attention && !unmasked_attention ? 0.5 : 1.0;
  // Embedding lookups do no FLOPs: only the output projection (the tied table or the untied head) does.
  const double lookup_only = c.embedding - (s.untied ? 0.0 : static_cast<double>(s.vocab) * s.hidden);
  // The MLA norms are weights without a matrix multiply; they are a few thousand parameters (ignored).
  return 6.0 * (c.active(s.layers, s.experts, s.top_k) - lookup_only) * tokens + masked * attention;
}

LayerOps build_layer_ops(const ModelShape& s, const Degrees& d, std::uint64_t micro_batch,
                         RecomputeMode recompute) {
  const std::uint64_t moe_ffn = s.moe_ffn ? s.moe_ffn : s.ffn;
  if (s.heads % d.tp || s.kv_heads % d.tp || s.ffn % d.tp || s.seq % d.cp || s.experts % d.ep ||
      (s.moe() && (moe_ffn % d.tp || (s.shared_experts * s.shared_ffn) % d.tp))) {
    throw std::invalid_argument("parallelism: degrees do not divide the model shape");
  }
  if (d.cp_comm != CpCommType::kP2p && !s.fused_attention) {
    throw std::invalid_argument("parallelism.cp_comm_type: all_gather and a2a need model.fused_attention");
  }
  if (d.cp_comm == CpCommType::kAllToAll && ((s.heads / d.tp) % d.cp || (s.kv_heads / d.tp) % d.cp)) {
    throw std::invalid_argument("parallelism.cp_comm_type: a2a needs the heads per TP rank divisible by CP");
  }
  const double e = dtype_bytes(storage_dtype(s.dtype));  // activations and their communication
  const double t = d.tp;
  const double T = static_cast<double>(micro_batch) * s.seq / d.cp;  // local tokens
  const double T_sp = d.sequence_parallel ? T / t : T;               // tokens outside the TP region
  const double h = s.hidden;
  const double dqk = static_cast<double>(s.qk_head_dim()), dv = static_cast<double>(s.v_head_dim());
  const double a_l = static_cast<double>(s.heads) / t, kv_l = static_cast<double>(s.kv_heads) / t;
  const double up = s.gated_mlp ? 2 : 1;
  const double S = s.seq;  // keys each local query attends to (all chunks, via the CP ring)
  const double V_l = static_cast<double>((s.vocab + d.tp - 1) / d.tp);
  const ParamCounts pc = count_params(s);

  LayerOps out;
  out.dense_layer_params_per_gpu =
      (pc.attention + pc.mlp_dense + pc.shared_experts) / t + pc.router + pc.norms;
  out.expert_layer_params_per_gpu = pc.experts / (t * d.ep);
  out.layer_params_per_gpu = out.dense_layer_params_per_gpu + out.expert_layer_params_per_gpu;
  out.first_dense_layer_params_per_gpu = (pc.attention + pc.first_dense_mlp) / t + pc.norms;
  out.embedding_params_per_gpu = pc.embedding / t;
  out.head_params_per_gpu = (s.untied ? pc.output / t : (d.pp > 1 ? pc.embedding / t : 0.0)) + pc.final_norm;
  out.activation_bytes = static_cast<std::uint64_t>(T_sp * h * e);

  const auto tp_enter = [&](Builder& b) {
    if (d.sequence_parallel) {
      b.collective("tp_allgather", "tp_reducescatter", CollectiveKind::kAllGather, GroupKind::kTensor,
                   T * h * e);
      b.gather_input_again_in_backward(T * h * e);
    }
  };
  const auto tp_exit = [&](Builder& b) {
    if (d.tp == 1) return;
    if (d.sequence_parallel) {
      b.collective("tp_reducescatter", "tp_allgather", CollectiveKind::kReduceScatter, GroupKind::kTensor,
                   T * h * e);
    } else {
      b.collective("tp_allreduce", "tp_allreduce", CollectiveKind::kAllReduce, GroupKind::kTensor, T * h * e);
    }
  };
  // The residual add after the attention and after the MLP (Megatron's fused bias-dropout-add: read two,
  // write one). With hidden dropout the kernel also writes a one-byte keep-mask, which the backward reads.
  const auto residual = [&](Builder& b, std::string_view f, std::string_view bwd) {
    if (s.hidden_dropout <= 0) {
      b.elementwise(f, bwd, T_sp * h, 3);
      return;
    }
    const double elements = T_sp * h;
    b.elementwise_bytes(f, bwd, 3 * e * elements + elements, 2 * 3 * e * elements + elements, elements);
  };
  // A (gated) MLP of width f_l per GPU over all local tokens.
  const auto mlp = [&](Builder& b, std::string_view pre, double f_l) {
    const bool dense = pre == "mlp";
    b.gemm(dense ? "mlp_up_fwd" : "shared_up_fwd", dense ? "mlp_up_bwd" : "shared_up_bwd", T, h, up * f_l);
    b.elementwise(dense ? "mlp_act_fwd" : "shared_act_fwd", dense ? "mlp_act_bwd" : "shared_act_bwd", T * f_l,
                  s.gated_mlp ? 3 : 2);
    b.gemm(dense ? "mlp_down_fwd" : "shared_down_fwd", dense ? "mlp_down_bwd" : "shared_down_bwd", T, f_l, h,
           true, true);
  };

  // One layer's ops; `dense_mlp`: a dense MLP of ffn instead of the experts.
  const auto layer = [&](bool dense_mlp, std::vector<LayerOp>& fwd, std::vector<LayerOp>& bwd,
                         std::vector<LayerOp>& wgrad) {
    Builder b(s.dtype);
    b.elementwise("ln1_fwd", "ln1_bwd", T_sp * h, 2);
    tp_enter(b);
    if (s.mla()) {
      // DeepSeek-V2 section 2.1 (eqs. 9-19): the down-projections to the query and key/value latents (with
      // the decoupled rotary key) are per token and not split by heads, so every TP rank computes them
      // (Megatron-LM's MLA keeps linear_q_down_proj / linear_kv_down_proj unsharded); the up-projections
      // split by heads.
      if (s.q_lora) {
        b.gemm("mla_q_down_fwd", "mla_q_down_bwd", T, h, static_cast<double>(s.q_lora));
        b.elementwise("mla_q_norm_fwd", "mla_q_norm_bwd", T * s.q_lora, 2);
        b.gemm("mla_q_up_fwd", "mla_q_up_bwd", T, static_cast<double>(s.q_lora), a_l * dqk, true, true);
      } else {
        b.gemm("mla_q_fwd", "mla_q_bwd", T, h, a_l * dqk);
      }
      b.gemm("mla_kv_down_fwd", "mla_kv_down_bwd", T, h, static_cast<double>(s.kv_lora + s.qk_rope));
      b.elementwise("mla_kv_norm_fwd", "mla_kv_norm_bwd", T * s.kv_lora, 2);
      b.gemm("mla_kv_up_fwd", "mla_kv_up_bwd", T, static_cast<double>(s.kv_lora), a_l * (s.qk_nope + dv),
             true, true);
      // Rotary embedding of the queries' rope part and the one shared rope key.
      const double qk = T * (a_l + 1) * static_cast<double>(s.qk_rope);
      b.elementwise_bytes("rope_fwd", "rope_bwd", 2 * e * qk, 2 * e * qk, qk);
    } else {
      b.gemm("qkv_fwd", "qkv_bwd", T, h, (a_l + 2 * kv_l) * dqk);
      if (!s.learned_pos) {
        // Rotary embeddings (models without learned absolute positions): Q and K read and written once; the
        // backward rotates their gradients the same way.
        const double qk = T * (a_l + kv_l) * dqk;
        b.elementwise_bytes("rope_fwd", "rope_bwd", 2 * e * qk, 2 * e * qk, qk);
      }
    }
    const std::size_t core_begin = b.ops.size();  // the attention core (selective recomputation) starts here
    // This rank's Q, K, V and attention output (T local tokens).
    const double q_bytes = T * a_l * dqk * e, k_bytes = T * kv_l * dqk * e, v_bytes = T * kv_l * dv * e,
                 o_bytes = T * a_l * dv * e;
    const CpExchangeBytes exchange =
        cp_exchange_bytes(d.cp_comm, d.cp, s.causal_attention, q_bytes, k_bytes, v_bytes, o_bytes);
    if (d.cp > 1 && d.cp_comm == CpCommType::kP2p) {
      b.collective("cp_ring_fwd", "cp_ring_bwd", CollectiveKind::kRingExchange, GroupKind::kContext,
                   T * kv_l * (dqk + dv) * e);
    } else if (d.cp > 1 && d.cp_comm == CpCommType::kAllGather) {
      // K and V gathered over the CP group (two calls), their gradients reduce-scattered back in the
      // backward, none of it overlapped (Transformer Engine: "KV all-gather between CP ranks is exposed").
      b.collective("cp_k_allgather", "cp_dk_reducescatter", CollectiveKind::kAllGather, GroupKind::kContext,
                   d.cp * k_bytes);
      b.collective("cp_v_allgather", "cp_dv_reducescatter", CollectiveKind::kAllGather, GroupKind::kContext,
                   d.cp * v_bytes);
      b.elementwise_bytes("cp_kv_reorder_fwd", "cp_dkv_accumulate_bwd", exchange.forward_before,
                          exchange.backward_after, T * kv_l * (dqk + dv) * d.cp);
    } else if (d.cp > 1) {
      // Ulysses: each all-to-all hands every CP peer its share of the heads for this rank's tokens.
      b.collective("cp_q_alltoall", "cp_dq_alltoall", CollectiveKind::kAllToAll, GroupKind::kContext,
                   q_bytes);
      b.collective("cp_k_alltoall", "cp_dk_alltoall", CollectiveKind::kAllToAll, GroupKind::kContext,
                   k_bytes);
      b.collective("cp_v_alltoall", "cp_dv_alltoall", CollectiveKind::kAllToAll, GroupKind::kContext,
                   v_bytes);
      b.elementwise_bytes("cp_qkv_reorder_fwd", "cp_dqkv_reorder_bwd", exchange.forward_before,
                          exchange.backward_after, T * (a_l * dqk + kv_l * (dqk + dv)));
    }
    if (s.fused_attention) {
      // A causal kernel skips the key blocks above the diagonal: it executes half the unmasked FLOPs (the
      // benchmarks' convention), at the lower rate the mask tells the compute model. Unfused attention
      // computes every score whatever the mask. Every CP type executes the same work per rank (the
      // load-balanced chunks of the ring and the all-gather, or a 1/cp share of the heads over the whole
      // sequence after the all-to-all).
      const double executed = s.causal_attention ? 0.5 : 1.0;
      b.matmul("attn_fwd", "attn_bwd", executed * 2 * T * S * a_l * (dqk + dv),
               T * a_l * (dqk + dv) + S * kv_l * (dqk + dv), {}, KernelKind::kAttentionFwd);
      if (s.causal_attention) b.ops.back().op.attention = cp_causal_attention_call(d.cp_comm, S, d.cp);
      // The kernel's head dimension, where queries/keys and values have the same width (not MLA's).
      if (dqk == dv) b.ops.back().op.attention.head_dim = dqk;
      // Dropout on the probabilities inside the kernel (its Philox RNG and mask), at the GPU's measured rate.
      b.ops.back().op.attention.dropout = s.attention_dropout > 0;
      if (d.cp > 1 && d.cp_comm == CpCommType::kP2p) {
        // Transformer Engine's ring around the kernels: K/V packing, half-sequence copies, the per-step
        // output merge and the dQ/dK/dV accumulation (cp_attention_merge.hpp).
        const CpMergeBytes merge =
            cp_attention_merge_bytes(d.cp, s.causal_attention, q_bytes, o_bytes, T * kv_l * (dqk + dv) * e);
        b.elementwise_bytes("cp_attn_merge_fwd", "cp_attn_merge_bwd", merge.forward, merge.backward,
                            T * a_l * dv);
      } else if (d.cp > 1 && d.cp_comm == CpCommType::kAllGather) {
        b.elementwise_bytes("cp_out_copy_fwd", "cp_kv_reorder_bwd", exchange.forward_after,
                            exchange.backward_before, T * a_l * dv);
        // The backward gathers K and V again (the forward keeps only the local ones): in the reversed
        // backward these come first, K then V, before the reorder and the attention's backward.
        b.backward_only_collective("cp_v_allgather", CollectiveKind::kAllGather, GroupKind::kContext,
                                   d.cp * v_bytes);
        b.backward_only_collective("cp_k_allgather", CollectiveKind::kAllGather, GroupKind::kContext,
                                   d.cp * k_bytes);
      } else if (d.cp > 1) {
        b.elementwise_bytes("cp_out_reorder_fwd", "cp_dout_reorder_bwd", exchange.forward_after,
                            exchange.backward_before, T * a_l * dv);
        b.collective("cp_out_alltoall", "cp_dout_alltoall", CollectiveKind::kAllToAll, GroupKind::kContext,
                     o_bytes);
      }
    } else {
      // Per sequence and head: scores[q x S] = Q[q x dqk] K^T, then out[q x dv] = P[q x S] V, q = local
      // queries.
      const double q = static_cast<double>(s.seq) / d.cp,
                   heads_batch = static_cast<double>(micro_batch) * a_l;
      b.matmul("attn_scores_fwd", "attn_scores_bwd", 2 * T * S * a_l * dqk,
               T * a_l * dqk + S * kv_l * dqk + a_l * T * S, {q, S, dqk, heads_batch});
      b.elementwise("softmax_fwd", "softmax_bwd", a_l * T * S, 2);
      b.elementwise("attn_dropout_fwd", "attn_dropout_bwd", a_l * T * S, 2);
      b.matmul("attn_values_fwd", "attn_values_bwd", 2 * T * S * a_l * dv,
               a_l * T * S + S * kv_l * dv + T * a_l * dv, {q, dv, S, heads_batch});
    }
    // An FP8 output projection's input cast belongs to the projection, not to the attention core.
    const std::size_t core_end = b.ops.size();
    b.gemm("proj_fwd", "proj_bwd", T, a_l * dv, h, true, true);
    tp_exit(b);
    residual(b, "attn_residual_fwd", "attn_residual_bwd");
    b.elementwise("ln2_fwd", "ln2_bwd", T_sp * h, 2);
    tp_enter(b);
    if (dense_mlp) {
      mlp(b, "mlp", static_cast<double>(s.ffn) / t);
    } else {
      const double k = s.top_k;
      const double f_l = static_cast<double>(moe_ffn) / t;
      const double local_experts = static_cast<double>(s.experts) / d.ep;
      b.gemm("router_fwd", "router_bwd", T, h, static_cast<double>(s.experts), false);
      // Shared experts: a dense MLP every token passes through (DeepSeekMoE, arXiv 2401.06066, section 3.2).
      if (s.shared_experts) mlp(b, "shared", static_cast<double>(s.shared_experts * s.shared_ffn) / t);
      if (d.ep > 1) {
        b.collective("ep_dispatch", "ep_combine_bwd", CollectiveKind::kAllToAll, GroupKind::kExpert,
                     T * k * h * e);
        b.ops.back().op.route = kRouteDispatch;
      }
      // Balanced routing: every GPU processes T*k token-expert pairs spread over its local experts (skewed
      // routing scales each GPU's share, moe_routing.hpp). A grouped GEMM: each local expert multiplies its
      // T*k/local_experts tokens by its own weights; the weights' bytes do not scale with the tokens.
      const double rows = T * k / local_experts;
      b.matmul("expert_up_fwd", "expert_up_bwd", 2 * T * k * h * up * f_l,
               T * k * h + local_experts * h * up * f_l + T * k * up * f_l,
               {rows, up * f_l, h, local_experts}, KernelKind::kMatmul, true, local_experts * h * up * f_l);
      b.elementwise("expert_act_fwd", "expert_act_bwd", T * k * f_l, s.gated_mlp ? 3 : 2);
      b.ops.back().op.route = kRouteCompute;
      b.matmul("expert_down_fwd", "expert_down_bwd", 2 * T * k * f_l * h,
               T * k * f_l + local_experts * f_l * h + T * k * h, {rows, h, f_l, local_experts},
               KernelKind::kMatmul, true, local_experts * f_l * h);
      if (d.ep > 1) {
        b.collective("ep_combine", "ep_dispatch_bwd", CollectiveKind::kAllToAll, GroupKind::kExpert,
                     T * k * h * e);
        b.ops.back().op.route = kRouteCombine;
      }
    }
    tp_exit(b);
    residual(b, "mlp_residual_fwd", "mlp_residual_bwd");

    // ZeRO-3 gathers this layer's parameters before each use and reduce-scatters its gradients after the
    // backward (no prefetch across micro-batches; the training program issues each gather one layer ahead
    // within a pass, models/training/training_program.hpp).
    const double dense_params =
        dense_mlp && s.moe() ? out.first_dense_layer_params_per_gpu : out.dense_layer_params_per_gpu;
    const double expert_params = dense_mlp ? 0.0 : out.expert_layer_params_per_gpu;
    const auto zero3_gather = [&](std::vector<LayerOp>& v, Phase phase) {
      if (d.zero != 3) return;
      LayerOp op;
      op.kind = OpKind::kCollective;
      op.phase = phase;
      op.name = "zero3_param_allgather";
      op.collective = CollectiveKind::kAllGather;
      op.group = GroupKind::kDataContext;
      op.comm_bytes = static_cast<std::uint64_t>(dense_params * e);
      v.push_back(op);
      if (expert_params > 0) {
        op.name = "zero3_expert_param_allgather";
        op.group = GroupKind::kExpertDataContext;
        op.comm_bytes = static_cast<std::uint64_t>(expert_params * e);
        v.push_back(op);
      }
    };

    zero3_gather(fwd, Phase::kForward);
    for (const auto& p : b.ops)
      if (!p.backward_only) fwd.push_back(p.op);

    zero3_gather(bwd, Phase::kBackward);
    if (recompute != RecomputeMode::kNone) {
      const bool full = recompute == RecomputeMode::kFull;
      for (std::size_t i = full ? 0 : core_begin; i < (full ? b.ops.size() : core_end); ++i) {
        if (b.ops[i].backward_only) continue;
        LayerOp op = b.ops[i].op;
        op.phase = Phase::kRecompute;
        bwd.push_back(op);
      }
    }
    for (auto it = b.ops.rbegin(); it != b.ops.rend(); ++it) {
      if (it->backward_only) {
        bwd.push_back(it->op);
      } else if (d.split_backward && it->weights) {
        auto [dgrad, w] = split_backward(backward_of(*it));
        bwd.push_back(dgrad);
        wgrad.push_back(w);
      } else {
        bwd.push_back(backward_of(*it));
      }
    }
    // The gradient reduce-scatter follows the weight gradients: in the W pass when the backward is split.
    auto& grads = d.split_backward ? wgrad : bwd;
    if (d.zero == 3) {
      zero3_gather(grads, Phase::kBackward);  // placeholders turned into gradient reduce-scatters below
      const std::size_t n = expert_params > 0 ? 2 : 1;
      for (std::size_t i = grads.size() - n; i < grads.size(); ++i) {
        auto& op = grads[i];
        op.collective = CollectiveKind::kReduceScatter;
        op.name = op.group == GroupKind::kDataContext ? "zero3_grad_reducescatter"
                                                      : "zero3_expert_grad_reducescatter";
      }
    }
  };
  layer(!s.moe(), out.forward, out.backward, out.weight_grad);
  if (s.moe() && s.dense_layers > 0)
    layer(true, out.dense_forward, out.dense_backward, out.dense_weight_grad);

  // Output head on the last pipeline stage: final norm, vocabulary-parallel output GEMM and cross entropy.
  Builder head(s.dtype);
  head.elementwise("final_ln_fwd", "final_ln_bwd", T_sp * h, 2);
  tp_enter(head);
  head.gemm("lm_head_fwd", "lm_head_bwd", T, h, V_l, false);
  const double logits = T * V_l;
  const double le = dtype_bytes(storage_dtype(s.dtype));
  if (s.fused_cross_entropy) {
    // Megatron-Core's fused cross entropy (megatron/core/fusions/fused_cross_entropy.py): the same passes
    // grouped into three compiled functions, each one HBM pass over the logits. Forward: cast to fp32 with
    // the max in the same loop (read le, write 4); subtract, exp and sum-exp, written back in place (read 4,
    // write 4); normalize in place after the all-reduce (8) = 22 bytes with BF16 logits. Backward: the target
    // update, the scale by the loss gradient and the cast back in one kernel that also writes the mutated
    // softmax back (read 4, write 4 + le) = 10 bytes.
    head.elementwise_bytes("loss_fwd", "loss_bwd", (le + 4 + 8 + 8) * logits, (8 + le) * logits, logits);
  } else {
    // Megatron-LM's vocab-parallel cross entropy (megatron/core/tensor_parallel/cross_entropy.py), eager,
    // per logit: forward: cast to fp32 (read 2, write 4), max (read 4), subtract in place (8), exp in place
    // (8), sum (read 4), normalize in place (8) = 38 bytes with BF16 logits; backward: scale the saved fp32
    // softmax in place (8) and cast the gradient back for the output GEMM (read 4, write 2) = 14 bytes.
    head.elementwise_bytes("loss_fwd", "loss_bwd", (le + 4 + 4 + 8 + 8 + 4 + 8) * logits,
                           (8 + 4 + le) * logits, logits);
  }
  if (d.tp > 1) {
    // Vocabulary-parallel cross entropy all-reduces max, sum-exp and target logit (fp32 per token): three
    // NCCL calls eager, two fused (the last two concatenated); charged as one call of the same bytes.
    head.collective("tp_loss_allreduce", "tp_allreduce", CollectiveKind::kAllReduce, GroupKind::kTensor,
                    T * 4 * 3);
  }
  for (const auto& p : head.ops)
    if (!p.backward_only) out.head_forward.push_back(p.op);
  for (auto it = head.ops.rbegin(); it != head.ops.rend(); ++it) {
    if (it->backward_only) {
      out.head_backward.push_back(it->op);
      continue;
    }
    if (it->op.name == "tp_loss_allreduce") {
      continue;  // the loss statistics need no backward collective
    }
    out.head_backward.push_back(backward_of(*it));
    if (it->op.name == "lm_head_fwd" && d.tp > 1 && !d.sequence_parallel) {
      LayerOp ar;
      ar.kind = OpKind::kCollective;
      ar.phase = Phase::kBackward;
      ar.name = "tp_allreduce";
      ar.group = GroupKind::kTensor;
      ar.comm_bytes = static_cast<std::uint64_t>(T * h * e);
      out.head_backward.push_back(ar);
    }
  }

  // Token embedding on the first stage: a vocabulary-parallel lookup whose partial rows are summed over TP.
  Builder emb(s.dtype);
  emb.elementwise("embedding_fwd", "embedding_bwd", T * h, s.learned_pos ? 3 : 2);
  if (d.tp > 1) {
    if (d.sequence_parallel) {
      emb.collective("tp_reducescatter", "", CollectiveKind::kReduceScatter, GroupKind::kTensor, T * h * e);
    } else {
      emb.collective("tp_allreduce", "", CollectiveKind::kAllReduce, GroupKind::kTensor, T * h * e);
    }
  }
  for (const auto& p : emb.ops) out.embedding_forward.push_back(p.op);
  out.embedding_backward.push_back(backward_of(emb.ops.front()));
  return out;
}

}  // namespace warpsim::workload
