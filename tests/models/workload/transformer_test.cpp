// Transformer arithmetic: parameter counts of published models, FLOPs per step vs 6*N*tokens, and the GEMM
// shapes the ops carry for the compute model's tile/wave quantization.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "models/workload/cp_attention_merge.hpp"
#include "models/workload/cp_exchange_bytes.hpp"
#include "models/workload/gpu_program.hpp"
#include "models/workload/moe_routing.hpp"
#include "models/workload/transformer.hpp"
#include "tests/models/workload/test_jobs.hpp"

namespace warpsim::workload {
namespace {

ModelShape gpt3_175b() {
  ModelShape s;
  s.layers = 96;
  s.hidden = 12288;
  s.ffn = 4 * 12288;
  s.heads = 96;
  s.kv_heads = 96;
  s.seq = 2048;
  s.vocab = 50257;
  s.linear_bias = true;
  s.learned_pos = true;
  return s;
}

TEST(Params, Gpt3_175B) {
  // Brown et al. 2020 report 175.0B; the usual exact count for this shape is 174.6B.
  const double n = count_params(gpt3_175b()).total(96);
  EXPECT_NEAR(n / 174.6e9, 1.0, 0.01) << n;
}

TEST(Params, Llama3_405B) {
  ModelShape s;
  s.layers = 126;
  s.hidden = 16384;
  s.ffn = 53248;
  s.heads = 128;
  s.kv_heads = 8;
  s.seq = 8192;
  s.vocab = 128256;
  s.gated_mlp = true;
  s.rms_norm = true;
  s.untied = true;
  const double n = count_params(s).total(s.layers);
  EXPECT_NEAR(n / 405e9, 1.0, 0.01) << n;  // Meta: 405B
}

TEST(Params, Mixtral8x7B) {
  ModelShape s;
  s.layers = 32;
  s.hidden = 4096;
  s.ffn = 14336;
  s.heads = 32;
  s.kv_heads = 8;
  s.seq = 4096;
  s.vocab = 32000;
  s.experts = 8;
  s.top_k = 2;
  s.gated_mlp = true;
  s.rms_norm = true;
  s.untied = true;
  const ParamCounts c = count_params(s);
  EXPECT_NEAR(c.total(s.layers) / 46.7e9, 1.0, 0.01) << c.total(s.layers);  // Mistral: 46.7B total
  EXPECT_NEAR(c.active(s.layers, s.experts, s.top_k) / 12.9e9, 1.0, 0.01);  // 12.9B active
}

TEST(Params, MegatronOneTrillion) {
  // Narayanan et al. 2021, Table 1: 128 layers, hidden 25600 -> 1008B parameters.
  ModelShape s;
  s.layers = 128;
  s.hidden = 25600;
  s.ffn = 4 * 25600;
  s.heads = 160;
  s.kv_heads = 160;
  s.seq = 2048;
  s.vocab = 51200;
  s.linear_bias = true;
  s.learned_pos = true;
  EXPECT_NEAR(count_params(s).total(s.layers) / 1008e9, 1.0, 0.01);
}

// Sum of the compute FLOPs of every GPU's op stream in one step.
double program_flops(const std::shared_ptr<const Job>& job) {
  double flops = 0;
  for (std::uint32_t r = 0; r < job->world_size(); ++r) {
    GpuProgram prog(job, r, 1);
    for (std::uint64_t i = 0; i < prog.size(); ++i) {
      const Op o = prog.op(i);
      if (o.kind == OpKind::kCompute && o.phase != Phase::kOptimizer) flops += o.flops;
    }
  }
  return flops;
}

TEST(Flops, StepFlopsMatchSixNTokensPlusAttention) {
  for (const char* parallel :
       {"", "tensor_parallel: 2 pipeline_parallel: 2 data_parallel: 2",
        "tensor_parallel: 2 context_parallel: 2 sequence_parallel: true",
        "pipeline_parallel: 2 pipeline_schedule: INTERLEAVED_1F1B virtual_stages_per_rank: 2 "
        "data_parallel: 2 zero_stage: 3"}) {
    const auto job = testing::make_job(testing::dense_spec_text(parallel, "global_batch_sequences: 8"));
    // What the kernels execute: a causal model's fused attention half the scores, unfused attention all.
    const double analytic = analytic_step_flops(job->shape(), 8, !job->shape().fused_attention);
    EXPECT_NEAR(program_flops(job) / analytic, 1.0, 0.01) << parallel;
  }
}

// Splitting the backward (ZB-H1) and running two model copies from both ends (DualPipe) moves work in time
// but not its amount: every GPU's step FLOPs equal 1F1B's (dense with ZeRO-3 and selective recomputation;
// MoE with expert parallelism).
TEST(Flops, SplitBackwardSchedulesKeepTheStepFlops) {
  const std::string train = "global_batch_sequences: 8 activation_recompute_mode: SELECTIVE";
  const auto dense = [&](const std::string& schedule) {
    return program_flops(testing::make_job(testing::dense_spec_text(
        "pipeline_parallel: 2 data_parallel: 2 zero_stage: 3 pipeline_schedule: " + schedule, train)));
  };
  const double one = dense("ONE_F_ONE_B");
  EXPECT_NEAR(dense("ZERO_BUBBLE_H1") / one, 1.0, 1e-12);
  EXPECT_NEAR(dense("DUAL_PIPE") / one, 1.0, 1e-12);
  const auto moe = [&](const std::string& schedule) {
    return program_flops(testing::make_job(testing::moe_spec_text(
        "data_parallel: 4 expert_parallel: 4 pipeline_parallel: 2 pipeline_schedule: " + schedule,
        "global_batch_sequences: 16")));
  };
  const double moe_one = moe("ONE_F_ONE_B");
  EXPECT_NEAR(moe("ZERO_BUBBLE_H1") / moe_one, 1.0, 1e-12);
  EXPECT_NEAR(moe("DUAL_PIPE") / moe_one, 1.0, 1e-12);
}

TEST(Flops, RecomputationAddsOneForwardOfTheLayers) {
  const auto plain = testing::make_job(testing::dense_spec_text("", "global_batch_sequences: 4"));
  const auto recompute =
      testing::make_job(testing::dense_spec_text("", "global_batch_sequences: 4 activation_recompute: true"));
  // Layers' forward is 1/3 of their fwd+bwd; the output head is not recomputed.
  const double extra = program_flops(recompute) - program_flops(plain);
  double layer_forward = 0;
  for (const auto& op : plain->layer_ops().forward) layer_forward += op.flops;
  EXPECT_NEAR(extra / (layer_forward * plain->shape().layers * plain->microbatches()), 1.0, 1e-9);
}

TEST(Flops, MoeStepFlopsUseActiveParameters) {
  const auto job = testing::make_job(testing::moe_spec_text(
      "data_parallel: 4 expert_parallel: 4 tensor_parallel: 2", "global_batch_sequences: 8"));
  EXPECT_NEAR(program_flops(job) / analytic_step_flops(job->shape(), 8), 1.0, 0.01);
}

const LayerOp& find_op(const std::vector<LayerOp>& ops, std::string_view name, Phase phase) {
  for (const auto& op : ops) {
    if (op.name == name && op.phase == phase) return op;
  }
  throw std::runtime_error("no op " + std::string(name));
}

TEST(GemmShapes, OpsCarryTheirMatrixShapes) {
  // GPT-3 175B on TP=8, micro-batch 2: local tokens 4096, 12 heads of 128 per GPU.
  Degrees d;
  d.tp = 8;
  const LayerOps ops = build_layer_ops(gpt3_175b(), d, 2, RecomputeMode::kFull);
  const double T = 2 * 2048, h = 12288;
  const LayerOp& qkv = find_op(ops.forward, "qkv_fwd", Phase::kForward);
  EXPECT_EQ(qkv.gemm, (GemmShape{T, 3 * h / 8, h, 1, false}));
  EXPECT_DOUBLE_EQ(qkv.flops, 2 * qkv.gemm.m * qkv.gemm.n * qkv.gemm.k);
  // The recomputed forward is the same GEMM; the backward is marked so dgrad and wgrad shapes are used.
  EXPECT_EQ(find_op(ops.backward, "qkv_fwd", Phase::kRecompute).gemm, qkv.gemm);
  const LayerOp& qkv_bwd = find_op(ops.backward, "qkv_bwd", Phase::kBackward);
  EXPECT_EQ(qkv_bwd.gemm, (GemmShape{T, 3 * h / 8, h, 1, true}));
  EXPECT_EQ(find_op(ops.forward, "mlp_down_fwd", Phase::kForward).gemm,
            (GemmShape{T, h, 4 * h / 8, 1, false}));
  // Attention: one product per sequence and local head.
  const LayerOp& scores = find_op(ops.forward, "attn_scores_fwd", Phase::kForward);
  EXPECT_EQ(scores.gemm, (GemmShape{2048, 2048, 128, 2 * 12, false}));
  EXPECT_DOUBLE_EQ(scores.flops, 2 * scores.gemm.m * scores.gemm.n * scores.gemm.k * scores.gemm.batch);
  EXPECT_EQ(find_op(ops.forward, "attn_values_fwd", Phase::kForward).gemm,
            (GemmShape{2048, 128, 2048, 24, false}));
  EXPECT_EQ(find_op(ops.head_forward, "lm_head_fwd", Phase::kForward).gemm.n, std::ceil(50257.0 / 8));
  // Elementwise ops carry no shape (no quantization).
  EXPECT_FALSE(find_op(ops.forward, "softmax_fwd", Phase::kForward).gemm.valid());
  EXPECT_FALSE(find_op(ops.backward, "ln1_bwd", Phase::kBackward).gemm.valid());
}

TEST(GemmShapes, ExpertsAreGroupedGemms) {
  const auto job = testing::make_job(testing::moe_spec_text(
      "data_parallel: 4 expert_parallel: 4 tensor_parallel: 2", "global_batch_sequences: 8"));
  const LayerOp& up = find_op(job->layer_ops().forward, "expert_up_fwd", Phase::kForward);
  ASSERT_TRUE(up.gemm.valid());
  EXPECT_DOUBLE_EQ(up.gemm.batch, static_cast<double>(job->shape().experts) / 4);
  EXPECT_NEAR(up.flops, 2 * up.gemm.m * up.gemm.n * up.gemm.k * up.gemm.batch, 1e-6 * up.flops);
}

ModelShape llama_like(DType dtype) {
  ModelShape s;
  s.layers = 8;
  s.hidden = 4096;
  s.ffn = 14336;
  s.heads = 32;
  s.kv_heads = 8;
  s.seq = 4096;
  s.vocab = 128256;
  s.gated_mlp = true;
  s.rms_norm = true;
  s.untied = true;
  s.fused_attention = true;
  s.dtype = dtype;
  return s;
}

TEST(Fp8, OnlyTheTransformerEngineGemmsRunInFp8) {
  Degrees d;
  d.tp = 4;
  d.sequence_parallel = true;
  const LayerOps bf16 = build_layer_ops(llama_like(DType::kBf16), d, 1, RecomputeMode::kNone);
  const LayerOps fp8 = build_layer_ops(llama_like(DType::kFp8), d, 1, RecomputeMode::kNone);
  for (std::string_view name : {"qkv_fwd", "proj_fwd", "mlp_up_fwd", "mlp_down_fwd"}) {
    EXPECT_EQ(find_op(fp8.forward, name, Phase::kForward).dtype, DType::kFp8) << name;
  }
  // Attention, norms, the output layer and the loss stay in BF16 (Megatron-LM's output layer is no TE
  // module).
  for (std::string_view name : {"attn_fwd", "ln1_fwd", "rope_fwd", "mlp_act_fwd"}) {
    EXPECT_EQ(find_op(fp8.forward, name, Phase::kForward).dtype, DType::kBf16) << name;
  }
  EXPECT_EQ(find_op(fp8.head_forward, "lm_head_fwd", Phase::kForward).dtype, DType::kBf16);
  // Communication and activations keep BF16 sizes: TP collectives and the pipeline message do not halve.
  EXPECT_EQ(fp8.activation_bytes, bf16.activation_bytes);
  for (std::size_t i = 0, j = 0; i < bf16.forward.size(); ++i) {
    if (bf16.forward[i].kind != OpKind::kCollective) continue;
    while (fp8.forward[j].kind != OpKind::kCollective) ++j;
    EXPECT_EQ(fp8.forward[j].comm_bytes, bf16.forward[i].comm_bytes) << bf16.forward[i].name;
    ++j;
  }
  // The cast(-transpose) kernels: inputs of proj and mlp_down (the others are fused into the norms) forward,
  // all four output gradients backward.
  std::size_t casts_fwd = 0, casts_bwd = 0;
  for (const auto& op : fp8.forward) casts_fwd += op.name == "fp8_cast_fwd";
  for (const auto& op : fp8.backward) casts_bwd += op.name == "fp8_cast_bwd";
  EXPECT_EQ(casts_fwd, 4u);
  EXPECT_EQ(casts_bwd, 4u);
  std::size_t bf16_casts = 0;
  for (const auto& op : bf16.forward) bf16_casts += op.name == "fp8_cast_fwd";
  EXPECT_EQ(bf16_casts, 0u);
}

// Sequence parallelism: each column-parallel GEMM (QKV, the MLP's up projection) saves only its sequence
// shard of the input, so the backward all-gathers the whole input again just before that GEMM's backward
// (Megatron-LM's LinearWithGradAccumulationAndAsyncCommunication.backward), besides the reduce-scatter of
// the data gradient; nothing of it runs in the forward. Without sequence parallelism there is no all-gather.
TEST(SequenceParallel, BackwardGathersTheInputAgainForEachColumnParallelGemm) {
  Degrees d;
  d.tp = 4;
  d.sequence_parallel = true;
  const ModelShape s = llama_like(DType::kBf16);
  const LayerOps ops = build_layer_ops(s, d, 1, RecomputeMode::kNone);
  const auto count = [](const std::vector<LayerOp>& v, CollectiveKind k) {
    std::size_t n = 0;
    for (const auto& op : v) n += op.kind == OpKind::kCollective && op.collective == k;
    return n;
  };
  EXPECT_EQ(count(ops.forward, CollectiveKind::kAllGather), 2u);
  EXPECT_EQ(count(ops.forward, CollectiveKind::kReduceScatter), 2u);
  // Backward: the two forward reduce-scatters become all-gathers, the two forward all-gathers become
  // reduce-scatters, and each column-parallel GEMM adds its input all-gather.
  EXPECT_EQ(count(ops.backward, CollectiveKind::kAllGather), 4u);
  EXPECT_EQ(count(ops.backward, CollectiveKind::kReduceScatter), 2u);
  const double tokens = static_cast<double>(s.seq);  // micro-batch 1
  for (std::string_view gemm : {"qkv_bwd", "mlp_up_bwd"}) {
    std::size_t i = 0;
    while (i < ops.backward.size() && ops.backward[i].name != gemm) ++i;
    ASSERT_LT(i, ops.backward.size()) << gemm;
    ASSERT_GT(i, 0u) << gemm;
    const LayerOp& before = ops.backward[i - 1];
    EXPECT_EQ(before.kind, OpKind::kCollective) << gemm;
    EXPECT_EQ(before.collective, CollectiveKind::kAllGather) << gemm;
    EXPECT_EQ(before.group, GroupKind::kTensor) << gemm;
    EXPECT_EQ(before.phase, Phase::kBackward) << gemm;
    EXPECT_EQ(before.comm_bytes, static_cast<std::uint64_t>(tokens * s.hidden * 2)) << gemm;  // whole input
  }
  Degrees plain = d;
  plain.sequence_parallel = false;
  const LayerOps no_sp = build_layer_ops(s, plain, 1, RecomputeMode::kNone);
  EXPECT_EQ(count(no_sp.backward, CollectiveKind::kAllGather), 0u);
}

TEST(Fp8, DataParallelGradientsAndWeightsStayInBf16) {
  const std::string text = testing::dense_spec_text("data_parallel: 4 tensor_parallel: 2 zero_stage: 1",
                                                    "global_batch_sequences: 8");
  std::string fp8_text = text;
  fp8_text.replace(fp8_text.find("BF16"), 4, "FP8");
  const auto bf16 = testing::make_job(text);
  const auto fp8 = testing::make_job(fp8_text);
  EXPECT_EQ(fp8->grad_bytes_per_param(), 2.0);
  EXPECT_EQ(fp8->checkpoint_bytes(), bf16->checkpoint_bytes());
  const auto& a = bf16->step_end_ops(0);
  const auto& b = fp8->step_end_ops(0);
  ASSERT_EQ(b.size(), a.size() + 1);  // plus the per-step FP8 weight cast
  for (std::size_t i = 0, j = 0; i < a.size(); ++i, ++j) {
    if (b[j].name == "fp8_weight_cast") ++j;
    EXPECT_EQ(b[j].name, a[i].name);
    EXPECT_EQ(b[j].comm_bytes, a[i].comm_bytes) << a[i].name;
  }
}

TEST(MemoryBoundOps, RealByteCounts) {
  Degrees d;
  d.tp = 2;
  const ModelShape s = llama_like(DType::kBf16);
  const LayerOps ops = build_layer_ops(s, d, 1, RecomputeMode::kNone);
  const double T = 4096, V_l = 128256 / 2;
  // Megatron-LM's vocab-parallel cross entropy: 38 bytes per logit forward, 14 backward (BF16 logits).
  EXPECT_DOUBLE_EQ(find_op(ops.head_forward, "loss_fwd", Phase::kForward).bytes, 38 * T * V_l);
  EXPECT_DOUBLE_EQ(find_op(ops.head_backward, "loss_bwd", Phase::kBackward).bytes, 14 * T * V_l);
  // Rotary on Q and K (16 + 4 local heads of 128), read and written once each way.
  const double qk = T * (16 + 4) * 128;
  EXPECT_DOUBLE_EQ(find_op(ops.forward, "rope_fwd", Phase::kForward).bytes, 2 * 2 * qk);
  EXPECT_DOUBLE_EQ(find_op(ops.backward, "rope_bwd", Phase::kBackward).bytes, 2 * 2 * qk);
  // Learned absolute positions: no rotary op.
  for (const auto& op : build_layer_ops(gpt3_175b(), d, 1, RecomputeMode::kNone).forward)
    EXPECT_NE(op.name, "rope_fwd");
  // Fused attention forward and backward are their own kernel classes.
  EXPECT_EQ(find_op(ops.forward, "attn_fwd", Phase::kForward).kernel, KernelKind::kAttentionFwd);
  EXPECT_EQ(find_op(ops.backward, "attn_bwd", Phase::kBackward).kernel, KernelKind::kAttentionBwd);
}

TEST(CausalAttention, FusedAttentionCarriesItsMaskAndExecutesHalfTheFlops) {
  Degrees d;
  d.tp = 2;
  ModelShape s = llama_like(DType::kBf16);
  ASSERT_TRUE(s.fused_attention && s.causal_attention);
  const LayerOps causal = build_layer_ops(s, d, 1, RecomputeMode::kFull);
  // Forward, recomputed forward and backward: a causal mask over the whole sequence, one kernel call, at the
  // model's head dimension.
  for (const auto* op : {&find_op(causal.forward, "attn_fwd", Phase::kForward),
                         &find_op(causal.backward, "attn_fwd", Phase::kRecompute),
                         &find_op(causal.backward, "attn_bwd", Phase::kBackward)}) {
    EXPECT_EQ(op->attention,
              (AttentionCall{static_cast<double>(s.seq), 1, static_cast<double>(s.qk_head_dim())}))
        << op->name;
  }
  // A causal kernel executes half the unmasked FLOPs (the key blocks above the diagonal are skipped).
  s.causal_attention = false;
  const LayerOps open = build_layer_ops(s, d, 1, RecomputeMode::kFull);
  EXPECT_FALSE(find_op(open.forward, "attn_fwd", Phase::kForward).attention.causal());
  EXPECT_DOUBLE_EQ(find_op(causal.forward, "attn_fwd", Phase::kForward).flops,
                   0.5 * find_op(open.forward, "attn_fwd", Phase::kForward).flops);
  EXPECT_DOUBLE_EQ(find_op(causal.backward, "attn_bwd", Phase::kBackward).flops,
                   0.5 * find_op(open.backward, "attn_bwd", Phase::kBackward).flops);
  // The model count halves the attention term likewise unless asked for every score.
  const double attention = 12.0 * s.layers * s.seq * s.seq * s.hidden * 8;
  EXPECT_NEAR(
      analytic_step_flops(s, 8) -
          [&] {
            ModelShape c = s;
            c.causal_attention = true;
            return analytic_step_flops(c, 8);
          }(),
      0.5 * attention, 1e-6 * attention);
  s.causal_attention = true;
  EXPECT_DOUBLE_EQ(analytic_step_flops(s, 8, /*unmasked_attention=*/true), [&] {
    ModelShape o = s;
    o.causal_attention = false;
    return analytic_step_flops(o, 8);
  }());
  // Context parallelism: cp kernel calls of seq / cp keys each.
  d.cp = 4;
  EXPECT_EQ(
      find_op(build_layer_ops(s, d, 1, RecomputeMode::kNone).forward, "attn_fwd", Phase::kForward).attention,
      (AttentionCall{s.seq / 4.0, 4, static_cast<double>(s.qk_head_dim())}));
  // Unfused attention computes every score: no mask on its GEMMs.
  s.fused_attention = false;
  for (const auto& op : build_layer_ops(s, d, 1, RecomputeMode::kNone).forward)
    EXPECT_FALSE(op.attention.causal());
}

// Transformer Engine's CP ring bookkeeping around the fused kernels, by hand from its tensors (CP 2, causal:
// the one later step is half-query on one rank, half-K/V on the other), and its place in the layer.
TEST(ContextParallel, RingBookkeepingMovesTheBytesOfTransformerEnginesTensors) {
  const double q = 10, o = 10, kv = 4;  // bytes of the local Q, O and K+V
  const CpMergeBytes two = cp_attention_merge_bytes(2, true, q, o, kv);
  // forward: K/V packing 2kv, zero-filled output o, diagonal merge 3o; later step: (kv + q)/2 copies and
  // (3 + 1.5)/2 merge passes over o.
  EXPECT_DOUBLE_EQ(two.forward, 2 * kv + o + 3 * o + (kv + q) / 2 + 2.25 * o);
  // backward: K/V into the ring buffer 2kv, dQ copy 2q, dK/dV concatenated 2kv and added 3kv; later step:
  // halves of Q, O, dO (q + 2o) or of K/V (kv), each on half the ranks, dQ added over 1.5 or 3 passes, dK/dV
  // concatenated (2 or 1) and added (3 or 1.5).
  EXPECT_DOUBLE_EQ(two.backward,
                   2 * kv + 2 * q + 5 * kv + (q + 2 * o) / 2 + kv / 2 + 2.25 * q + 1.5 * kv + 2.25 * kv);
  // Without a mask every later step is whole.
  const CpMergeBytes open = cp_attention_merge_bytes(4, false, q, o, kv);
  EXPECT_DOUBLE_EQ(open.forward, 2 * kv + 4 * o + 3 * 3 * o);
  EXPECT_DOUBLE_EQ(open.backward, 2 * kv + 2 * q + 5 * kv + 3 * (3 * q + 5 * kv));
  // More ring steps, more bookkeeping.
  EXPECT_GT(cp_attention_merge_bytes(4, true, q, o, kv).forward, two.forward);

  // In the layer: right after the fused attention forward (the CP ring and the kernel stay adjacent for the
  // overlap), its backward twin right before the attention backward, with the local tensors' sizes.
  Degrees d;
  d.cp = 2;
  const ModelShape s = llama_like(DType::kBf16);
  const LayerOps ops = build_layer_ops(s, d, 1, RecomputeMode::kNone);
  const auto at = [](const std::vector<LayerOp>& v, std::string_view name) {
    for (std::size_t i = 0; i < v.size(); ++i)
      if (v[i].name == name) return i;
    return v.size();
  };
  ASSERT_LT(at(ops.forward, "cp_attn_merge_fwd"), ops.forward.size());
  EXPECT_EQ(at(ops.forward, "cp_attn_merge_fwd"), at(ops.forward, "attn_fwd") + 1);
  EXPECT_EQ(at(ops.forward, "attn_fwd"), at(ops.forward, "cp_ring_fwd") + 1);
  EXPECT_EQ(at(ops.backward, "cp_attn_merge_bwd") + 1, at(ops.backward, "attn_bwd"));
  const double tokens = static_cast<double>(s.seq) / 2, d_head = static_cast<double>(s.head_dim());
  const CpMergeBytes want =
      cp_attention_merge_bytes(2, true, 2 * tokens * s.heads * d_head, 2 * tokens * s.heads * d_head,
                               2 * tokens * s.kv_heads * 2 * d_head);
  EXPECT_DOUBLE_EQ(find_op(ops.forward, "cp_attn_merge_fwd", Phase::kForward).bytes, want.forward);
  EXPECT_DOUBLE_EQ(find_op(ops.backward, "cp_attn_merge_bwd", Phase::kBackward).bytes, want.backward);
  // No context parallelism, no bookkeeping.
  d.cp = 1;
  const LayerOps without_cp = build_layer_ops(s, d, 1, RecomputeMode::kNone);
  EXPECT_EQ(at(without_cp.forward, "cp_attn_merge_fwd"), without_cp.forward.size());
}

// Names of a pass's ops in order, for checking where the CP types put their collectives and copies.
std::vector<std::string_view> names_of(const std::vector<LayerOp>& ops) {
  std::vector<std::string_view> names;
  for (const auto& op : ops) names.push_back(op.name);
  return names;
}

// The ops from `first` up to and including `last` (both must be there, in that order).
std::vector<std::string_view> span_of(const std::vector<LayerOp>& ops, std::string_view first,
                                      std::string_view last) {
  const auto names = names_of(ops);
  const auto b = std::find(names.begin(), names.end(), first);
  const auto e = std::find(b, names.end(), last);
  EXPECT_NE(e, names.end()) << first << " .. " << last;
  return e == names.end() ? std::vector<std::string_view>{} : std::vector<std::string_view>(b, e + 1);
}

// Megatron-Core's fused cross entropy: the same loss in three compiled passes over the logits instead of
// eight eager ones; everything else in the head, the all-reduce included, is unchanged.
TEST(MemoryBoundOps, FusedCrossEntropyMakesFewerPassesOverTheLogits) {
  Degrees d;
  d.tp = 2;
  ModelShape s = llama_like(DType::kBf16);
  const LayerOps eager = build_layer_ops(s, d, 1, RecomputeMode::kNone);
  s.fused_cross_entropy = true;
  const LayerOps fused = build_layer_ops(s, d, 1, RecomputeMode::kNone);
  const double T = 4096, V_l = 128256 / 2;
  // Forward: cast with max (2 + 4), exp with sum-exp in place (4 + 4), normalize (4 + 4); backward: one
  // kernel reading the softmax, writing it back and writing the BF16 gradient (4 + 4 + 2).
  EXPECT_DOUBLE_EQ(find_op(fused.head_forward, "loss_fwd", Phase::kForward).bytes, 22 * T * V_l);
  EXPECT_DOUBLE_EQ(find_op(fused.head_backward, "loss_bwd", Phase::kBackward).bytes, 10 * T * V_l);
  ASSERT_EQ(names_of(fused.head_forward), names_of(eager.head_forward));
  ASSERT_EQ(names_of(fused.head_backward), names_of(eager.head_backward));
  for (std::size_t i = 0; i < eager.head_forward.size(); ++i) {
    const LayerOp& a = eager.head_forward[i];
    const LayerOp& b = fused.head_forward[i];
    EXPECT_DOUBLE_EQ(b.flops, a.flops) << a.name;
    if (a.name != "loss_fwd") {
      EXPECT_DOUBLE_EQ(b.bytes, a.bytes) << a.name;
      EXPECT_EQ(b.comm_bytes, a.comm_bytes) << a.name;
    }
  }
  EXPECT_EQ(names_of(fused.forward), names_of(eager.forward));  // the layers do not change
}

// Training dropout: the fused kernel carries the flag (forward, recomputed and backward); the
// bias-dropout-add residuals write a one-byte mask that their backward reads; nothing changes at p = 0.
TEST(Dropout, FusedAttentionCarriesItAndResidualsMoveTheMask) {
  Degrees d;
  d.tp = 2;
  d.sequence_parallel = true;
  ModelShape s = llama_like(DType::kBf16);
  const LayerOps none = build_layer_ops(s, d, 2, RecomputeMode::kSelective);
  s.attention_dropout = 0.1;
  s.hidden_dropout = 0.1;
  const LayerOps with = build_layer_ops(s, d, 2, RecomputeMode::kSelective);
  ASSERT_EQ(names_of(with.forward), names_of(none.forward));
  ASSERT_EQ(names_of(with.backward), names_of(none.backward));
  for (const auto* op : {&find_op(with.forward, "attn_fwd", Phase::kForward),
                         &find_op(with.backward, "attn_fwd", Phase::kRecompute),
                         &find_op(with.backward, "attn_bwd", Phase::kBackward)}) {
    EXPECT_TRUE(op->attention.dropout) << op->name;
  }
  EXPECT_FALSE(find_op(none.forward, "attn_fwd", Phase::kForward).attention.dropout);
  // Residuals on the sequence-parallel shard: 2 sequences x 4096 tokens / TP 2, hidden 4096, BF16.
  const double elements = 2.0 * 4096 / 2 * 4096;
  for (std::string_view name : {"attn_residual", "mlp_residual"}) {
    const std::string f = std::string(name) + "_fwd", b = std::string(name) + "_bwd";
    EXPECT_DOUBLE_EQ(find_op(none.forward, f, Phase::kForward).bytes, 3 * 2 * elements) << name;
    EXPECT_DOUBLE_EQ(find_op(with.forward, f, Phase::kForward).bytes, 3 * 2 * elements + elements) << name;
    EXPECT_DOUBLE_EQ(find_op(none.backward, b, Phase::kBackward).bytes, 2 * 3 * 2 * elements) << name;
    EXPECT_DOUBLE_EQ(find_op(with.backward, b, Phase::kBackward).bytes, 2 * 3 * 2 * elements + elements)
        << name;
  }
}

// Transformer Engine's all-gather context parallelism (AttnFuncWithCPAndKVAllGather): K and V gathered
// before the kernel and again before its backward, dK/dV reduce-scattered after it, the reorder copies
// around it, and the kernel's two query chunks per rank against the keys up to their end.
TEST(ContextParallel, AllGatherGathersKvTwiceAndReduceScattersItsGradients) {
  // Bytes by hand for CP 4, causal: q = 10, k = 3, v = 5, out = 10.
  const double q = 10, k = 3, v = 5, o = 10, kv = k + v;
  const CpExchangeBytes ag = cp_exchange_bytes(CpCommType::kAllGather, 4, true, q, k, v, o);
  EXPECT_DOUBLE_EQ(ag.forward_before, 2 * 4 * kv);            // index_select of the gathered K, V
  EXPECT_DOUBLE_EQ(ag.forward_after, 2 * o);                  // two output halves copied
  EXPECT_DOUBLE_EQ(ag.backward_before, 2 * 4 * kv + 4 * kv);  // gathered again and reordered; dK, dV zeroed
  EXPECT_DOUBLE_EQ(ag.backward_after, 2 * q + 3 * 4.5 * kv + 2 * 4 * kv);  // ranges (r+1)c + (8-r)c = 4.5 kv
  // Without a mask both chunks' ranges are the whole gathered sequence.
  EXPECT_DOUBLE_EQ(cp_exchange_bytes(CpCommType::kAllGather, 4, false, q, k, v, o).backward_after,
                   2 * q + 3 * 8 * kv + 2 * 4 * kv);
  // Two chunks of seq / 8 tokens per rank; 1/8 of the work on a causal diagonal.
  EXPECT_EQ(cp_causal_attention_call(CpCommType::kAllGather, 4096, 4), (AttentionCall{512, 8}));
  EXPECT_EQ(cp_causal_attention_call(CpCommType::kP2p, 4096, 4), (AttentionCall{1024, 4}));
  EXPECT_EQ(cp_causal_attention_call(CpCommType::kAllToAll, 4096, 4), (AttentionCall{4096, 1}));

  Degrees d;
  d.tp = 2;
  d.cp = 4;
  d.cp_comm = CpCommType::kAllGather;
  const ModelShape s = llama_like(DType::kBf16);
  const LayerOps ops = build_layer_ops(s, d, 1, RecomputeMode::kSelective);
  EXPECT_EQ(span_of(ops.forward, "cp_k_allgather", "cp_out_copy_fwd"),
            (std::vector<std::string_view>{"cp_k_allgather", "cp_v_allgather", "cp_kv_reorder_fwd",
                                           "attn_fwd", "cp_out_copy_fwd"}));
  // Backward: the selective recomputation repeats the core (gathers included), then the backward gathers K
  // and V again, reorders, runs the kernel and reduce-scatters dV, dK.
  EXPECT_EQ(span_of(ops.backward, "cp_k_allgather", "cp_out_copy_fwd"),
            (std::vector<std::string_view>{"cp_k_allgather", "cp_v_allgather", "cp_kv_reorder_fwd",
                                           "attn_fwd", "cp_out_copy_fwd"}));
  EXPECT_EQ(span_of(ops.backward, "cp_kv_reorder_bwd", "cp_dk_reducescatter"),
            (std::vector<std::string_view>{"cp_kv_reorder_bwd", "attn_bwd", "cp_dkv_accumulate_bwd",
                                           "cp_dv_reducescatter", "cp_dk_reducescatter"}));
  const auto names = names_of(ops.backward);
  const auto bwd_attn = std::find(names.begin(), names.end(), "attn_bwd") - names.begin();
  ASSERT_GE(bwd_attn, 3);
  EXPECT_EQ(names[bwd_attn - 3], "cp_k_allgather");
  EXPECT_EQ(ops.backward[bwd_attn - 3].phase, Phase::kBackward);
  EXPECT_EQ(names[bwd_attn - 2], "cp_v_allgather");
  // Sizes: the gathered K is cp times this rank's (tokens seq/cp, kv heads / tp, head dim), 2 bytes each.
  const double tokens = s.seq / 4.0, kv_heads = s.kv_heads / 2.0, dh = static_cast<double>(s.head_dim());
  const double k_local = tokens * kv_heads * dh * 2;
  const auto& gather = find_op(ops.forward, "cp_k_allgather", Phase::kForward);
  EXPECT_EQ(gather.collective, CollectiveKind::kAllGather);
  EXPECT_EQ(gather.group, GroupKind::kContext);
  EXPECT_EQ(gather.comm_bytes, static_cast<std::uint64_t>(4 * k_local));
  const auto& scatter = find_op(ops.backward, "cp_dk_reducescatter", Phase::kBackward);
  EXPECT_EQ(scatter.collective, CollectiveKind::kReduceScatter);
  EXPECT_EQ(scatter.comm_bytes, static_cast<std::uint64_t>(4 * k_local));
  const double q_local = tokens * (s.heads / 2.0) * dh * 2;
  const CpExchangeBytes want =
      cp_exchange_bytes(CpCommType::kAllGather, 4, true, q_local, k_local, k_local, q_local);
  EXPECT_DOUBLE_EQ(find_op(ops.forward, "cp_kv_reorder_fwd", Phase::kForward).bytes, want.forward_before);
  EXPECT_DOUBLE_EQ(find_op(ops.backward, "cp_kv_reorder_bwd", Phase::kBackward).bytes, want.backward_before);
  EXPECT_DOUBLE_EQ(find_op(ops.backward, "cp_dkv_accumulate_bwd", Phase::kBackward).bytes,
                   want.backward_after);
  // The same work as the ring, called as two chunks per rank; no ring and no ring bookkeeping.
  Degrees ring = d;
  ring.cp_comm = CpCommType::kP2p;
  const LayerOps ring_ops = build_layer_ops(s, ring, 1, RecomputeMode::kSelective);
  EXPECT_DOUBLE_EQ(find_op(ops.forward, "attn_fwd", Phase::kForward).flops,
                   find_op(ring_ops.forward, "attn_fwd", Phase::kForward).flops);
  EXPECT_EQ(find_op(ops.forward, "attn_fwd", Phase::kForward).attention, (AttentionCall{s.seq / 8.0, 8, dh}));
  for (std::string_view gone : {"cp_ring_fwd", "cp_attn_merge_fwd"})
    EXPECT_EQ(std::count(names.begin(), names.end(), gone), 0) << gone;
}

// Transformer Engine's all-to-all context parallelism (DeepSpeed-Ulysses; AttnFuncWithCPAndQKVOA2A): Q, K, V
// exchanged for a head split, one causal call over the whole sequence, the output exchanged back.
TEST(ContextParallel, AllToAllSwitchesToAHeadSplitAroundAFullSequenceAttention) {
  const double q = 10, k = 3, v = 5, o = 10;
  const CpExchangeBytes a2a = cp_exchange_bytes(CpCommType::kAllToAll, 2, true, q, k, v, o);
  EXPECT_DOUBLE_EQ(a2a.forward_before, 4 * (q + k + v));  // each copied on either side of its all-to-all
  EXPECT_DOUBLE_EQ(a2a.forward_after, 4 * o);
  EXPECT_DOUBLE_EQ(a2a.backward_before, 4 * o);
  EXPECT_DOUBLE_EQ(a2a.backward_after, 4 * (q + k + v));

  Degrees d;
  d.cp = 2;
  d.cp_comm = CpCommType::kAllToAll;
  const ModelShape s = llama_like(DType::kBf16);
  const LayerOps ops = build_layer_ops(s, d, 1, RecomputeMode::kNone);
  EXPECT_EQ(
      span_of(ops.forward, "cp_q_alltoall", "cp_out_alltoall"),
      (std::vector<std::string_view>{"cp_q_alltoall", "cp_k_alltoall", "cp_v_alltoall", "cp_qkv_reorder_fwd",
                                     "attn_fwd", "cp_out_reorder_fwd", "cp_out_alltoall"}));
  EXPECT_EQ(span_of(ops.backward, "cp_dout_alltoall", "cp_dq_alltoall"),
            (std::vector<std::string_view>{"cp_dout_alltoall", "cp_dout_reorder_bwd", "attn_bwd",
                                           "cp_dqkv_reorder_bwd", "cp_dv_alltoall", "cp_dk_alltoall",
                                           "cp_dq_alltoall"}));
  const double tokens = s.seq / 2.0, dh = static_cast<double>(s.head_dim());
  const auto& out = find_op(ops.forward, "cp_out_alltoall", Phase::kForward);
  EXPECT_EQ(out.collective, CollectiveKind::kAllToAll);
  EXPECT_EQ(out.group, GroupKind::kContext);
  EXPECT_EQ(out.comm_bytes, static_cast<std::uint64_t>(tokens * s.heads * dh * 2));
  EXPECT_EQ(find_op(ops.forward, "cp_k_alltoall", Phase::kForward).comm_bytes,
            static_cast<std::uint64_t>(tokens * s.kv_heads * dh * 2));
  EXPECT_EQ(find_op(ops.forward, "attn_fwd", Phase::kForward).attention,
            (AttentionCall{static_cast<double>(s.seq), 1, dh}));
  // Heads that do not split over the CP group are refused (8 key/value heads over TP 2 x CP 8).
  d.tp = 2;
  d.cp = 8;
  EXPECT_THROW(build_layer_ops(s, d, 1, RecomputeMode::kNone), std::invalid_argument);
  // So is either exchange without Transformer Engine's fused attention.
  ModelShape unfused = s;
  unfused.fused_attention = false;
  d.tp = 1;
  d.cp = 2;
  EXPECT_THROW(build_layer_ops(unfused, d, 1, RecomputeMode::kNone), std::invalid_argument);
}

}  // namespace
}  // namespace warpsim::workload

namespace warpsim::workload {
namespace {
// DeepSeek-V3 (arXiv 2412.19437; its config.json): 61 layers, the first 3 dense (FFN 18432), 1 shared + 256
// routed experts of width 2048, top-8, MLA (q_lora 1536, kv_lora 512, qk 128 + 64, v 128), untied
// 129280-token vocabulary. The report gives 671B total and 37B activated parameters (the MTP module apart).
TEST(TransformerTest, DeepSeekV3ParameterCounts) {
  ModelShape s;
  s.layers = 61;
  s.hidden = 7168;
  s.ffn = 18432;
  s.heads = 128;
  s.kv_heads = 128;
  s.seq = 4096;
  s.vocab = 129280;
  s.experts = 256;
  s.top_k = 8;
  s.moe_ffn = 2048;
  s.shared_experts = 1;
  s.shared_ffn = 2048;
  s.dense_layers = 3;
  s.q_lora = 1536;
  s.kv_lora = 512;
  s.qk_nope = 128;
  s.qk_rope = 64;
  s.v_dim = 128;
  s.gated_mlp = true;
  s.rms_norm = true;
  s.untied = true;
  const ParamCounts c = count_params(s);
  // Hand arithmetic: MLA 7168*1536 + 1536 + 1536*128*192 + 7168*576 + 512 + 512*128*256 + 128*128*7168.
  EXPECT_DOUBLE_EQ(c.attention, 187107328.0);
  EXPECT_DOUBLE_EQ(c.experts, 256.0 * 3 * 7168 * 2048);
  EXPECT_DOUBLE_EQ(c.first_dense_mlp, 3.0 * 7168 * 18432);
  EXPECT_NEAR(c.total(s.layers) / 671e9, 1.0, 0.01) << c.total(s.layers);
  // 37.55B with the input embedding table, 36.63B without it (a lookup, no matrix multiply).
  EXPECT_NEAR(c.active(s.layers, s.experts, s.top_k) / 37e9, 1.0, 0.02);
  EXPECT_NEAR((c.active(s.layers, s.experts, s.top_k) - c.embedding) / 37e9, 1.0, 0.012);
  // FLOPs: attention core per token and layer 6 * seq * heads * (192 + 128) against the closed form, half
  // of it for the causal model (the products below the diagonal) unless every score is counted.
  const double tokens = 4096.0;
  const double attn = 6.0 * 61 * 4096.0 * 4096 * 128 * (192 + 128);
  const double linear = 6.0 * (c.active(s.layers, s.experts, s.top_k) - c.embedding) * tokens;
  EXPECT_NEAR(analytic_step_flops(s, 1), linear + 0.5 * attn, 1.0);
  EXPECT_NEAR(analytic_step_flops(s, 1, /*unmasked_attention=*/true), linear + attn, 1.0);
  // MLA's fused attention has query/key width 192 and value width 128: no head dimension is measured for
  // that kernel, so the op carries none (the compute model charges head dimension 128's rate).
  s.fused_attention = true;
  s.seq = 1024;
  const LayerOps mla = build_layer_ops(s, Degrees{}, 1, RecomputeMode::kNone);
  EXPECT_EQ(find_op(mla.forward, "attn_fwd", Phase::kForward).attention.head_dim, 0.0);
}

}  // namespace
}  // namespace warpsim::workload

namespace warpsim::workload {
namespace {

// Routing skew: 0 is exact balance; > 0 keeps the shares a distribution (sum 1, each <= 1/top_k), is a pure
// function of the key (the same on a second object, so on any rank) and differs between keys.
TEST(MoeRoutingTest, SkewZeroIsBalancedAndSkewIsDeterministic) {
  const MoeRouting flat(256, 64, 8, 0.0, 1);
  EXPECT_TRUE(flat.balanced());
  for (std::uint32_t m = 0; m < 64; ++m) EXPECT_EQ(flat.share({3, 0, 5, 0}, m), 1.0 / 64);
  for (const double w : flat.expert_shares({3, 0, 5, 0})) EXPECT_EQ(w, 1.0 / 256);
  const MoeRouting a(256, 64, 8, 1.0, 7), b(256, 64, 8, 1.0, 7);
  double sum = 0, max = 0;
  for (std::uint32_t m = 0; m < 64; ++m) {
    sum += a.share({3, 0, 5, 0}, m);
    max = std::max(max, a.share({3, 0, 5, 0}, m));
    EXPECT_EQ(a.share({3, 0, 5, 0}, m), b.share({3, 0, 5, 0}, m));
  }
  EXPECT_NEAR(sum, 1.0, 1e-12);
  EXPECT_GT(max, 1.5 / 64);  // a skew of 1 leaves some member well above its balanced share
  for (const double w : a.expert_shares({3, 0, 5, 0})) EXPECT_LE(w, 1.0 / 8 + 1e-15);
  EXPECT_NE(a.share({4, 0, 5, 0}, 0), a.share({3, 0, 5, 0}, 0));
  // A hot expert's share is capped at 1/top_k.
  const MoeRouting hot(16, 8, 4, 10.0, 3);
  double hsum = 0;
  for (const double w : hot.expert_shares({0, 0, 0, 0})) {
    EXPECT_LE(w, 0.25 + 1e-12);
    hsum += w;
  }
  EXPECT_NEAR(hsum, 1.0, 1e-12);
}

// Skewed routing at the op level, on a DeepSeek-like layer (16 experts, top-4, EP8, no TP): every GPU's
// dispatch all-to-all carries its T k h e send buffer, whatever the skew; member m's routed-expert work is
// the balanced work times n share(m), so the expert group's routed FLOPs (the work the dispatched bytes
// bring) equal the balanced total: the skew moves work between members and conserves it.
TEST(MoeRoutingTest, SkewedExpertWorkFollowsTheSharesAndIsConserved) {
  const std::string par = "pipeline_parallel: 1 data_parallel: 8 expert_parallel: 8";
  const std::string train = "global_batch_sequences: 8";
  const std::string model =
      "gpu_type: \"H800\" model { num_layers: 2 hidden_size: 512 ffn_hidden_size: 2048 "
      "num_attention_heads: 8 seq_length_tokens: 512 vocab_size: 8000 num_experts: 16 moe_top_k: 4 "
      "moe_ffn_hidden_size: 256 num_shared_experts: 1 first_dense_layers: 1 q_lora_rank: 128 "
      "kv_lora_rank: 64 qk_nope_head_dim: 32 qk_rope_head_dim: 16 v_head_dim: 32 gated_mlp: true ";
  const auto flat = testing::make_job(model + "} parallelism { " + par + " } training { " + train + " }");
  const auto skew = testing::make_job(model + "moe_routing_skew: 1 moe_routing_seed: 5 } parallelism { " +
                                      par + " } training { " + train + " }");
  const double n = 8;
  // One GPU's forward routed ops and dispatch bytes of layer 1 (the MoE layer), micro-batch 0.
  struct Layer {
    double dispatch_bytes = 0, expert_flops = 0;
    RouteKey key;
  };
  const auto layer_of = [](const std::shared_ptr<const Job>& job, std::uint32_t gpu) {
    const GpuProgram prog(job, gpu, 1);
    Layer l;
    for (std::uint64_t i = 0; i < prog.size(); ++i) {
      const Op o = prog.op(i);
      if (o.layer != 1 || o.microbatch != 0 || o.phase != Phase::kForward) continue;
      if (o.kind == OpKind::kCollective && o.route == kRouteDispatch) l.dispatch_bytes += o.comm_bytes;
      if (o.kind == OpKind::kCompute && o.route == kRouteCompute) {
        l.expert_flops += o.flops;
        l.key = prog.route_key(o);
      }
    }
    return l;
  };
  const double T = 512, k = 4, h = 512, e = 2;
  const MoeRouting& routing = skew->routing();
  ASSERT_FALSE(routing.balanced());
  double balanced_total = 0, skewed_total = 0, max_ratio = 0;
  for (std::uint32_t m = 0; m < 8; ++m) {
    const Layer a = layer_of(flat, m), b = layer_of(skew, m);
    EXPECT_EQ(a.dispatch_bytes, T * k * h * e) << m;
    EXPECT_EQ(b.dispatch_bytes, T * k * h * e) << m;  // the buffer is the same; its split follows the skew
    ASSERT_GT(a.expert_flops, 0) << m;
    const double f = n * routing.share(b.key, m);
    EXPECT_NEAR(b.expert_flops, a.expert_flops * f, 1e-9 * a.expert_flops) << m;
    max_ratio = std::max(max_ratio, b.expert_flops / a.expert_flops);
    balanced_total += a.expert_flops;
    skewed_total += b.expert_flops;
  }
  EXPECT_NEAR(skewed_total, balanced_total, 1e-9 * balanced_total);
  EXPECT_GT(max_ratio, 1.2);  // the draw is skewed: some member does well above its balanced work
}

}  // namespace
}  // namespace warpsim::workload
