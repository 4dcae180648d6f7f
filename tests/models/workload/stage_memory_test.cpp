// Uneven pipeline stages, activation recomputation modes and the per-GPU memory estimate against closed
// forms: Megatron-LM's first/last-stage layer split, the attention-core FLOPs selective recomputation
// repeats, Korthikanti et al.'s Table 2 activation bytes, and one configuration worked by hand
// (docs/workload.md).
#include <gtest/gtest.h>

#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/workload/gpu_program.hpp"
#include "models/workload/memory_estimate.hpp"
#include "models/workload/stage_layers.hpp"
#include "models/workload/transformer.hpp"
#include "tests/models/workload/test_jobs.hpp"

namespace warpsim::workload {
namespace {

using testing::dense_spec_text;
using testing::make_job;

std::vector<std::uint32_t> per_stage(const StageLayers& l) {
  std::vector<std::uint32_t> v;
  for (std::uint32_t s = 0; s < l.stages(); ++s) v.push_back(l.stage(s));
  return v;
}

// Every layer index is produced by exactly one (stage, chunk, position), and the chunks of the virtual
// pipeline follow each other without gaps.
void expect_covers_every_layer_once(const StageLayers& l, std::uint32_t layers) {
  std::multiset<std::uint32_t> seen;
  for (std::uint32_t c = 0; c < l.chunks(); ++c) {
    for (std::uint32_t s = 0; s < l.stages(); ++s) {
      for (std::uint32_t j = 0; j < l.chunk(s); ++j) seen.insert(l.first_layer(s, c) + j);
    }
  }
  ASSERT_EQ(seen.size(), layers);
  for (std::uint32_t i = 0; i < layers; ++i) EXPECT_EQ(seen.count(i), 1u) << i;
}

TEST(StageLayers, EvenSplitIsTheOldArithmetic) {
  const StageLayers l(16, 4, 2);
  EXPECT_TRUE(l.even());
  for (std::uint32_t s = 0; s < 4; ++s) {
    EXPECT_EQ(l.stage(s), 4u);
    EXPECT_EQ(l.chunk(s), 2u);
    for (std::uint32_t c = 0; c < 2; ++c)
      EXPECT_EQ(l.first_layer(s, c), (c * 4 + s) * 2);  // virtual stage x lpc
  }
  expect_covers_every_layer_once(l, 16);
}

TEST(StageLayers, Llama3On16StagesTakesOneLayerOffTheFirstAndLast) {
  // Dubey et al. 2024, section 3.3.2: 126 layers on PP=16, one layer fewer on the first and last stage.
  const StageLayers l(126, 16, 1, 7, 7);
  std::vector<std::uint32_t> want(16, 8);
  want.front() = want.back() = 7;
  EXPECT_EQ(per_stage(l), want);
  EXPECT_EQ(l.first_layer(1, 0), 7u);
  EXPECT_EQ(l.first_layer(15, 0), 119u);
  EXPECT_EQ(l.max_stage(), 8u);
  expect_covers_every_layer_once(l, 126);
}

TEST(StageLayers, OnlyOneEndSetLeavesTheOtherAMiddleStage) {
  EXPECT_EQ(per_stage(StageLayers(10, 4, 1, 1, 0)), (std::vector<std::uint32_t>{1, 3, 3, 3}));
  EXPECT_EQ(per_stage(StageLayers(10, 4, 1, 0, 4)), (std::vector<std::uint32_t>{2, 2, 2, 4}));
  EXPECT_EQ(per_stage(StageLayers(8, 2, 1, 3, 5)), (std::vector<std::uint32_t>{3, 5}));  // no middle stage
}

TEST(StageLayers, InterleavedUnevenFollowsMegatronOffsets) {
  // 28 layers, PP=4, VPP=2, 6 on the first and last stage: 8 per middle stage, chunks of 3 | 4 | 4 | 3.
  // Megatron's get_transformer_layer_offset: chunk c of stage s starts at c x 14 + (layers per chunk of the
  // stages before s).
  const StageLayers l(28, 4, 2, 6, 6);
  EXPECT_EQ(per_stage(l), (std::vector<std::uint32_t>{6, 8, 8, 6}));
  EXPECT_EQ(l.chunk(0), 3u);
  EXPECT_EQ(l.chunk(1), 4u);
  EXPECT_EQ(l.first_layer(0, 1), 14u);
  EXPECT_EQ(l.first_layer(2, 0), 7u);
  EXPECT_EQ(l.first_layer(3, 1), 25u);
  expect_covers_every_layer_once(l, 28);
}

TEST(StageLayers, ImpossibleSplitsNameTheField) {
  struct Case {
    std::uint32_t layers, stages, chunks, first, last;
    const char* field;
  };
  EXPECT_NO_THROW(StageLayers(10, 4, 1, 2, 2));  // 6 layers over 2 middle stages
  EXPECT_NO_THROW(StageLayers(12, 4, 2, 2, 2));  // 4 per middle stage, 2 per chunk
  for (const Case& c : {
           Case{11, 4, 1, 2, 2, "parallelism.last_stage_layers"},   // 7 do not split over 2 middle stages
           Case{8, 2, 1, 3, 4, "parallelism.last_stage_layers"},    // 1 layer left, no middle stage
           Case{8, 3, 1, 4, 4, "parallelism.last_stage_layers"},    // a middle stage with no layer
           Case{8, 3, 1, 9, 0, "parallelism.first_stage_layers"},   // more than the model
           Case{12, 4, 2, 3, 3, "parallelism.first_stage_layers"},  // 3 not a multiple of VPP=2
           Case{14, 4, 2, 2, 2, "parallelism.last_stage_layers"},  // middle stages get 5, not a multiple of 2
           Case{8, 1, 1, 8, 0, "parallelism.first_stage_layers"},  // PP = 1
       }) {
    try {
      StageLayers(c.layers, c.stages, c.chunks, c.first, c.last);
      ADD_FAILURE() << c.layers << "/" << c.stages << "/" << c.first << "/" << c.last << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(c.field), std::string::npos) << e.what();
    }
  }
}

// The dense test job (8 layers) on PP=4 split 1 | 3 | 3 | 1.
std::shared_ptr<const Job> uneven_job(const std::string& training = "global_batch_sequences: 4") {
  return make_job(
      dense_spec_text("pipeline_parallel: 4 first_stage_layers: 1 last_stage_layers: 1", training));
}

TEST(UnevenStages, SlotOpsFlopsAndParametersFollowTheStageLayers) {
  const auto job = uneven_job();
  const auto& L = job->layer_ops();
  const auto& sched = job->schedule();
  const std::vector<std::uint32_t> layers{1, 3, 3, 1};
  double layer_flops = 0;
  for (const auto& op : L.forward) layer_flops += op.flops;
  double stage_layer_params = 0;
  for (std::uint32_t s = 0; s < 4; ++s) {
    EXPECT_EQ(job->layers_in_stage(s), layers[s]);
    const ScheduleSlot fwd{true, 0, 0}, bwd{false, 0, 0};
    const std::uint64_t p2p_f = (s > 0) + (s < 3), p2p_b = p2p_f;
    EXPECT_EQ(job->slot_op_count(s, fwd), p2p_f + (s == 0) * L.embedding_forward.size() +
                                              (s == 3) * L.head_forward.size() +
                                              layers[s] * L.forward.size());
    EXPECT_EQ(job->slot_op_count(s, bwd), p2p_b + (s == 0) * L.embedding_backward.size() +
                                              (s == 3) * L.head_backward.size() +
                                              layers[s] * L.backward.size());
    // FLOPs and layer indices of a forward slot, read from the GPU program of the stage's first GPU.
    const GpuProgram prog(job, s * job->pipeline_stride());
    std::uint64_t k = 0;
    while (!(sched.slot(s, k) == fwd)) ++k;
    double flops = 0, pre_post = 0;
    std::set<std::uint32_t> seen_layers;
    for (std::uint64_t i = job->slot_offset(s, k); i < job->slot_offset(s, k + 1); ++i) {
      const Op o = prog.op(i);
      if (o.kind != OpKind::kCompute) continue;
      flops += o.flops;
      seen_layers.insert(o.layer);
    }
    for (const auto& op : (s == 0 ? L.embedding_forward : s == 3 ? L.head_forward : std::vector<LayerOp>{})) {
      pre_post += op.flops;
    }
    EXPECT_DOUBLE_EQ(flops, layers[s] * layer_flops + pre_post) << "stage " << s;
    const std::uint32_t first = std::accumulate(layers.begin(), layers.begin() + s, 0u);
    EXPECT_EQ(*seen_layers.begin(), first);
    EXPECT_EQ(*seen_layers.rbegin(), first + layers[s] - 1);
    // Gradients (and so the DP reduction and the optimizer) cover this stage's layers only.
    const double ends = (s == 0 ? L.embedding_params_per_gpu : 0.0) + (s == 3 ? L.head_params_per_gpu : 0.0);
    EXPECT_DOUBLE_EQ(job->dense_grad_params(s), layers[s] * L.dense_layer_params_per_gpu + ends);
    stage_layer_params += job->dense_grad_params(s) - ends;
  }
  EXPECT_DOUBLE_EQ(stage_layer_params, 8 * L.dense_layer_params_per_gpu);
}

TEST(UnevenStages, SpecErrorsNameTheField) {
  for (const auto& [parallel, field] : {
           std::pair{"pipeline_parallel: 4 first_stage_layers: 2 last_stage_layers: 1",
                     "parallelism.last_stage_layers"},  // 5 left for 2 middle stages
           std::pair{"pipeline_parallel: 2 first_stage_layers: 3 last_stage_layers: 3",
                     "parallelism.last_stage_layers"},
           std::pair{"pipeline_parallel: 2 pipeline_schedule: INTERLEAVED_1F1B virtual_stages_per_rank: 2 "
                     "first_stage_layers: 3",
                     "parallelism.first_stage_layers"},
       }) {
    try {
      make_job(dense_spec_text(parallel, "global_batch_sequences: 4"));
      ADD_FAILURE() << parallel << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  }
}

ModelShape gpt_shape() {  // Korthikanti et al.'s GPT: 4h MLP, multi-head attention, 16-bit activations
  ModelShape s;
  s.layers = 96;
  s.hidden = 12288;
  s.ffn = 4 * 12288;
  s.heads = 96;
  s.kv_heads = 96;
  s.seq = 2048;
  s.vocab = 51200;
  s.linear_bias = true;
  s.learned_pos = true;
  return s;
}

TEST(Recompute, SelectiveRepeatsTheAttentionCore) {
  Degrees d;
  d.tp = 8;
  const ModelShape s = gpt_shape();
  const double b = 2, sq = s.seq, h = s.hidden, a = s.heads, t = d.tp;
  std::vector<std::string> names;
  double flops = 0;
  for (const auto& op : build_layer_ops(s, d, 2, RecomputeMode::kSelective).backward) {
    if (op.phase != Phase::kRecompute) continue;
    names.emplace_back(op.name);
    flops += op.flops;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"attn_scores_fwd", "softmax_fwd", "attn_dropout_fwd",
                                             "attn_values_fwd"}));
  // QK^T and attention over V: 2 x 2bs^2h/t; softmax and dropout: the model's 4 FLOPs per score each.
  EXPECT_DOUBLE_EQ(flops, 4 * b * sq * sq * h / t + 2 * 4 * b * sq * sq * a / t);

  // Full recomputation repeats the whole forward, none repeats nothing.
  const LayerOps full = build_layer_ops(s, d, 2, RecomputeMode::kFull);
  double fwd = 0, rec = 0;
  for (const auto& op : full.forward) fwd += op.flops;
  for (const auto& op : full.backward) rec += op.phase == Phase::kRecompute ? op.flops : 0;
  EXPECT_DOUBLE_EQ(rec, fwd);
  for (const auto& op : build_layer_ops(s, d, 2, RecomputeMode::kNone).backward)
    EXPECT_NE(op.phase, Phase::kRecompute);

  // A fused attention kernel is recomputed as one op.
  ModelShape f = s;
  f.fused_attention = true;
  names.clear();
  for (const auto& op : build_layer_ops(f, d, 2, RecomputeMode::kSelective).backward) {
    if (op.phase == Phase::kRecompute) names.emplace_back(op.name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"attn_fwd"}));
}

TEST(Recompute, SpecFieldsSelectTheMode) {
  const auto mode = [](const std::string& training) {
    return make_job(dense_spec_text("", "global_batch_sequences: 4 " + training))
        ->params()
        .training.activation_recompute;
  };
  EXPECT_EQ(mode(""), RecomputeMode::kNone);
  EXPECT_EQ(mode("activation_recompute: true"), RecomputeMode::kFull);
  EXPECT_EQ(mode("activation_recompute: true activation_recompute_mode: FULL"), RecomputeMode::kFull);
  EXPECT_EQ(mode("activation_recompute_mode: SELECTIVE"), RecomputeMode::kSelective);
  EXPECT_EQ(mode("activation_recompute_mode: NONE"), RecomputeMode::kNone);
  EXPECT_THROW(mode("activation_recompute: true activation_recompute_mode: NONE"), std::invalid_argument);
}

TEST(Memory, LayerActivationsMatchKorthikantiTable2) {
  const ModelShape s = gpt_shape();
  const double b = 1, sq = s.seq, h = s.hidden, a = s.heads;
  const double sbh = sq * b * h;
  Degrees d;
  // No parallelism: sbh(34 + 5as/h).
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, d, 1, RecomputeMode::kNone), sbh * (34 + 5 * a * sq / h));
  d.tp = 8;
  const double t = 8;
  // Tensor parallel: sbh(10 + 24/t + 5as/(ht)); selective: sbh(10 + 24/t).
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, d, 1, RecomputeMode::kNone),
                   sbh * (10 + 24 / t + 5 * a * sq / (h * t)));
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, d, 1, RecomputeMode::kSelective), sbh * (10 + 24 / t));
  // Full recomputation: the layer input, 2sbh.
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, d, 1, RecomputeMode::kFull), 2 * sbh);
  // Sequence parallel: sbh/t (34 + 5as/h); selective: 34 sbh/t; full: 2sbh/t.
  d.sequence_parallel = true;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, d, 1, RecomputeMode::kNone), sbh / t * (34 + 5 * a * sq / h));
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, d, 1, RecomputeMode::kSelective), 34 * sbh / t);
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, d, 1, RecomputeMode::kFull), 2 * sbh / t);
}

// The configuration docs/workload.md ("Memory") works by hand: the dense test model (8 layers, h 2048,
// f 8192, 16 heads, s 1024, V 32000, biases, LayerNorm, BF16) on TP=2 x PP=2 x DP=2 with sequence
// parallelism, ZeRO-1, Adam, micro-batch 1, 4 micro-batches.
TEST(Memory, EstimateMatchesTheWorkedExample) {
  const auto job =
      make_job(dense_spec_text("tensor_parallel: 2 pipeline_parallel: 2 data_parallel: 2 "
                               "sequence_parallel: true zero_stage: 1",
                               "global_batch_sequences: 8"));
  const MemoryEstimate m = estimate_memory(*job);
  ASSERT_EQ(m.stages.size(), 2u);
  // Per layer and GPU: (attention 4h^2 + 4h + MLP 2hf + f + h) / t + norms 4h = 25,183,232 parameters.
  EXPECT_DOUBLE_EQ(job->layer_ops().dense_layer_params_per_gpu, 25183232);
  // Stage 0: 4 layers + the embedding's vocabulary shard V h / t = 32,768,000 -> 133,500,928 parameters:
  // 2 bytes of weights and 2 of gradients each, 12 bytes of Adam state over the DP group of 2.
  EXPECT_DOUBLE_EQ(m.stages[0].weight_bytes, 2.0 * 133500928);
  EXPECT_DOUBLE_EQ(m.stages[0].gradient_bytes, 2.0 * 133500928);
  EXPECT_DOUBLE_EQ(m.stages[0].optimizer_bytes, 12.0 * 133500928 / 2);
  // Activations: sbh/t (34 + 5as/h) = 1,048,576 x 74 = 77,594,624 bytes per layer; stage 0 of 1F1B holds
  // p - 0 = 2 micro-batches x 4 layers.
  EXPECT_EQ(m.stages[0].inflight_chunks, 2u);
  EXPECT_DOUBLE_EQ(m.stages[0].activation_bytes, 2 * 4 * 77594624.0);
  EXPECT_DOUBLE_EQ(m.stages[0].total_bytes(), 1955766272.0);
  // Stage 1: 4 layers + the tied output projection's shard + final norm (32,772,096) = 133,505,024
  // parameters; 1 micro-batch of 4 layers plus the fp32 logits 4 x s x V/t = 65,536,000 bytes.
  EXPECT_EQ(m.stages[1].inflight_chunks, 1u);
  EXPECT_DOUBLE_EQ(m.stages[1].parameter_bytes(), 4.0 * 133505024 + 12.0 * 133505024 / 2);
  EXPECT_DOUBLE_EQ(m.stages[1].activation_bytes, 4 * 77594624.0 + 65536000);
  EXPECT_EQ(m.peak_stage, 0u);
  EXPECT_DOUBLE_EQ(m.hbm_bytes, 80e9);
}

// DualPipe on the worked example's job (PP = 2, 4 micro-batches): every rank holds two stages, one of each
// model copy (the DualPipe README's "Parameter 2x"), and both end ranks hold the embedding and the head.
TEST(Memory, DualPipeDoublesTheParametersByHand) {
  const auto job =
      make_job(dense_spec_text("tensor_parallel: 2 pipeline_parallel: 2 data_parallel: 2 "
                               "sequence_parallel: true zero_stage: 1 pipeline_schedule: DUAL_PIPE",
                               "global_batch_sequences: 8"));
  const MemoryEstimate m = estimate_memory(*job);
  ASSERT_EQ(m.stages.size(), 2u);
  for (std::uint32_t st = 0; st < 2; ++st) {
    EXPECT_EQ(job->layers_in_stage(st), 8u);
    EXPECT_EQ(job->layers_in_chunk(st), 4u);
    // 2 x 4 layers x 25,183,232 + the embedding shard 32,768,000 + the head's 32,772,096 = 267,005,952.
    EXPECT_DOUBLE_EQ(m.stages[st].weight_bytes, 2.0 * 267005952);
    EXPECT_DOUBLE_EQ(m.stages[st].gradient_bytes, 2.0 * 267005952);
    EXPECT_DOUBLE_EQ(m.stages[st].optimizer_bytes, 12.0 * 267005952 / 2);
    // PP + 1 = 3 chunks of 4 layers in flight (the README's "Activation PP+1"), plus the fp32 logits.
    EXPECT_EQ(m.stages[st].inflight_chunks, 3u);
    EXPECT_DOUBLE_EQ(m.stages[st].activation_bytes, 3 * 4 * 77594624.0 + 65536000);
  }
  // Against 1F1B's stage 0 (133,500,928 parameters): twice the layers' parameters, plus the head's.
  EXPECT_DOUBLE_EQ(m.stages[0].weight_bytes - 2 * 2.0 * 133500928, 2.0 * (32772096 - 32768000));
}

TEST(Memory, InterleavedFirstStageHoldsKorthikantisFactor) {
  // Korthikanti section 4.2.3: the first stage of an interleaved schedule holds L(1 + (p-1)/(pv)) layers'
  // activations; 8 layers, p = 2, v = 2 -> 8 x 5/4 = 10 layers = 5 chunks of 2.
  const auto job = make_job(
      dense_spec_text("pipeline_parallel: 2 pipeline_schedule: INTERLEAVED_1F1B virtual_stages_per_rank: 2",
                      "global_batch_sequences: 8"));
  const MemoryEstimate m = estimate_memory(*job);
  EXPECT_EQ(m.stages[0].inflight_chunks * job->layers_in_chunk(0), 10u);
}

TEST(Memory, OverflowIsRefusedUnlessAllowed) {
  // The dense test model at 64k tokens with unfused attention: ~700 GB of score tensors per GPU.
  std::string text = dense_spec_text("", "global_batch_sequences: 1");
  text.replace(text.find("seq_length_tokens: 1024"), 23, "seq_length_tokens: 65536");
  try {
    make_job(text);
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("peak memory per GPU"), std::string::npos) << w;
    EXPECT_NE(w.find("HBM of 80.0 GB"), std::string::npos) << w;
    EXPECT_NE(w.find("training.allow_hbm_overflow"), std::string::npos) << w;
  }
  text.replace(text.find("global_batch_sequences: 1"), 25,
               "global_batch_sequences: 1 allow_hbm_overflow: true");
  EXPECT_NO_THROW(make_job(text));
}

}  // namespace
}  // namespace warpsim::workload
