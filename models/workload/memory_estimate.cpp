// Per-GPU memory estimate: parameter state and in-flight activations per pipeline stage (see
// memory_estimate.hpp for the closed forms and their sources).
#include "models/workload/memory_estimate.hpp"

#include <algorithm>
#include <cstdio>

#include "models/workload/job.hpp"

namespace warpsim::workload {

double layer_activation_bytes(const ModelShape& s, const Degrees& d, std::uint64_t micro_batch,
                              RecomputeMode recompute, bool dense_mlp) {
  const double e = dtype_bytes(storage_dtype(s.dtype));  // one activation value (Korthikanti: 2 bytes)
  const double t = d.tp, h = s.hidden;
  const double dqk = static_cast<double>(s.qk_head_dim()), dv = static_cast<double>(s.v_head_dim());
  const double T = static_cast<double>(micro_batch) * s.seq / d.cp;  // local tokens (sb / cp)
  const double r = d.sequence_parallel ? T / t : T;                  // tokens outside the TP region
  if (recompute == RecomputeMode::kFull) return e * r * h;           // the layer's input only: 2sbh(/t)
  const double a_l = static_cast<double>(s.heads) / t, kv_l = static_cast<double>(s.kv_heads) / t;
  const bool moe = s.moe() && !dense_mlp;
  const double f_l = static_cast<double>(moe && s.moe_ffn ? s.moe_ffn : s.ffn) / t;
  // A GEMM input saved for the weight-gradient GEMM: an FP8 job's Transformer Engine linear layers save the
  // FP8 cast of their input (1 byte) rather than the 16-bit tensor.
  const double g = s.dtype == DType::kFp8 ? dtype_bytes(DType::kFp8) : e;
  // Outside the TP region (Korthikanti's "10" in 10 + 24/t): two LayerNorm inputs (4sbh), the QKV and MLP
  // GEMM inputs (2sbh each) and the two dropout masks (1 byte each, sbh each).
  double bytes = (2 * e + 2 * g + 2) * r * h;
  // Inside (their 24/t): Q, K, V (4sbh + 2sbh for multi-head attention; K and V are kv_heads wide) and the
  // output projection's input (2sbh).
  // MLA (DeepSeek-V2): the per-head Q, K (qk wide) and V (v wide) after the up-projections, plus the two
  // latents (the up-projections' inputs) and the shared rotary key.
  bytes += e * T * (a_l * dqk + kv_l * (dqk + dv)) + g * T * a_l * dv;
  if (s.mla()) bytes += g * T * static_cast<double>(s.q_lora + s.kv_lora + s.qk_rope);
  // The s x s attention scores (their 5as/h): softmax output, dropout mask (1 byte) and dropout output.
  // Neither a fused (flash) attention kernel nor selective recomputation keeps them.
  if (!s.fused_attention && recompute == RecomputeMode::kNone) {
    bytes += (e + 1 + e) * a_l * T * static_cast<double>(s.seq);
  }
  // MLP (their 8sbh + 8sbh for a 4h GeLU MLP): the up projection's output (gate and up for a gated MLP),
  // the activation's input, and the down projection's input; an MoE layer does it for top-k copies of each
  // token and also keeps the dispatched tokens, the experts' GEMM input.
  const double up = s.gated_mlp ? 2 : 1;
  const double k = moe ? static_cast<double>(s.top_k) : 1.0;
  bytes += T * k * f_l * (e * up + g);
  if (moe) bytes += g * T * k * h;
  // Shared experts: a dense MLP of their total width over every token.
  if (moe && s.shared_experts)
    bytes += T * static_cast<double>(s.shared_experts * s.shared_ffn) / t * (e * up + g);
  return bytes;
}

MemoryEstimate estimate_memory(const Job& job) {
  const auto& d = job.degrees();
  const auto& s = job.shape();
  const auto& t = job.params().training;
  const auto& L = job.layer_ops();
  const auto& sched = job.schedule();
  const double e = dtype_bytes(storage_dtype(s.dtype));
  const double ge = job.grad_bytes_per_param();
  const double opt = t.optimizer == Optimizer::kSgd ? 4 + 4 : 4 + 4 + 4;
  const double dp_n = job.group(0, GroupKind::kDataContext).size();
  const double edp_n = job.group(0, GroupKind::kExpertDataContext).size();
  const double per_layer = layer_activation_bytes(s, d, job.micro_batch_sequences(), t.activation_recompute);
  const double per_dense_layer =
      layer_activation_bytes(s, d, job.micro_batch_sequences(), t.activation_recompute, true);
  // Full recomputation re-materializes one layer's activations at a time during the backward.
  const double working = t.activation_recompute == RecomputeMode::kFull
                             ? layer_activation_bytes(s, d, job.micro_batch_sequences(), RecomputeMode::kNone)
                             : 0.0;
  const double T = static_cast<double>(job.micro_batch_sequences()) * s.seq / d.cp;
  const double vocab_l = static_cast<double>((s.vocab + d.tp - 1) / d.tp);

  MemoryEstimate m;
  for (std::uint32_t st = 0; st < d.pp; ++st) {
    StageMemory g;
    const double dense = job.dense_grad_params(st), expert = job.expert_grad_params(st);
    const double sharded = dense / dp_n + expert / edp_n;  // this GPU's 1/n of its stage shard
    const double full = dense + expert;
    g.weight_bytes = (d.zero >= 3 ? sharded : full) * e;
    // Transformer Engine keeps an FP8 copy of each GEMM weight and of its transpose (the step-end cast).
    if (s.dtype == DType::kFp8) g.weight_bytes += job.layers_in_stage(st) * L.layer_params_per_gpu * 2;
    g.gradient_bytes = (d.zero >= 2 ? sharded : full) * ge;
    g.optimizer_bytes = (d.zero >= 1 ? sharded : full) * opt;
    g.inflight_chunks = sched.max_in_flight(st);
    // A stage's chunks hold the same number of layers; the leading dense ones count at their own size
    // (averaged over the stage's chunks).
    const double nd = job.leading_dense_in_stage(st), lst = job.layers_in_stage(st);
    const double chunk_layers_bytes =
        nd == 0 ? job.layers_in_chunk(st) * per_layer
                : job.layers_in_chunk(st) * ((lst - nd) * per_layer + nd * per_dense_layer) / lst;
    g.activation_bytes = static_cast<double>(g.inflight_chunks) * chunk_layers_bytes + working;
    if (job.holds_head(st)) g.activation_bytes += 4 * T * vocab_l;  // fp32 logits of the loss
    m.stages.push_back(g);
    const auto models = job.stage_computes(st);
    const GpuProfile* smallest = &models.front()->gpu();
    for (const ComputeModel* c : models) {
      if (c->gpu().hbm_bytes < smallest->hbm_bytes) smallest = &c->gpu();
    }
    m.stage_hbm_bytes.push_back(smallest->hbm_bytes);
    m.stage_hbm_gpu.push_back(smallest->name);
    if (g.total_bytes() > m.stages[m.peak_stage].total_bytes()) m.peak_stage = st;
  }
  m.hbm_bytes = m.stage_hbm_bytes[m.peak_stage];
  return m;
}

std::string describe_overflow(const MemoryEstimate& m, std::string_view gpu) {
  return describe_overflow(m, m.peak_stage, gpu);
}

std::string describe_overflow(const MemoryEstimate& m, std::uint32_t stage, std::string_view gpu) {
  const StageMemory& p = m.stages[stage];
  const double hbm = stage < m.stage_hbm_bytes.size() ? m.stage_hbm_bytes[stage] : m.hbm_bytes;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "peak memory per GPU %.1f GB (pipeline stage %u: parameters + gradients + optimizer %.1f GB, "
                "activations %.1f GB) exceeds the %.*s's HBM of %.1f GB",
                p.total_bytes() / 1e9, stage, p.parameter_bytes() / 1e9, p.activation_bytes / 1e9,
                static_cast<int>(gpu.size()), gpu.data(), hbm / 1e9);
  return buf;
}

}  // namespace warpsim::workload
