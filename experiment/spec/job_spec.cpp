// JobSpec parsing (text/JSON), default filling, structural validation and the conversion to the workload
// model's plain JobParams (see job_spec.hpp).
#include "experiment/spec/job_spec.hpp"
#include "experiment/spec/spec_text.hpp"

#include <google/protobuf/util/json_util.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <tuple>

namespace warpsim::spec {

namespace {

[[noreturn]] void fail(const std::string& field, const std::string& what) {
  throw std::invalid_argument("job spec: " + field + ": " + what);
}

std::string str(std::uint64_t v) {
  return std::to_string(v);
}

void require_positive(std::uint64_t v, const std::string& field) {
  if (v == 0) fail(field, "must be > 0");
}

void require_at_most(std::uint64_t v, std::uint64_t bound, const std::string& field) {
  if (v > bound) fail(field, "at most " + str(bound) + " (got " + str(v) + ")");
}

void require_divides(std::uint64_t divisor, const std::string& divisor_field, std::uint64_t value,
                     const std::string& value_field) {
  if (value % divisor != 0) {
    fail(divisor_field, str(divisor) + " does not divide " + value_field + " (" + str(value) + ")");
  }
}

// Closed sets of the spec become the model's enums; UNSPECIFIED was replaced by normalized(), so any other
// value is a number the .proto does not define (JSON and text format accept them for proto3 enums).
workload::DType to_dtype(JobModel::DType d) {
  switch (d) {
    case JobModel::BF16:
      return workload::DType::kBf16;
    case JobModel::FP16:
      return workload::DType::kFp16;
    case JobModel::FP8:
      return workload::DType::kFp8;
    case JobModel::FP32:
      return workload::DType::kFp32;
    default:
      fail("model.dtype", "unknown value " + std::to_string(static_cast<int>(d)));
  }
}

workload::Norm to_norm(JobModel::Norm n) {
  switch (n) {
    case JobModel::LAYER_NORM:
      return workload::Norm::kLayerNorm;
    case JobModel::RMS_NORM:
      return workload::Norm::kRmsNorm;
    default:
      fail("model.norm", "unknown value " + std::to_string(static_cast<int>(n)));
  }
}

workload::PipelineScheduleKind to_schedule(JobParallelism::PipelineSchedule s) {
  switch (s) {
    case JobParallelism::ONE_F_ONE_B:
      return workload::PipelineScheduleKind::kOneFOneB;
    case JobParallelism::INTERLEAVED_1F1B:
      return workload::PipelineScheduleKind::kInterleaved1F1B;
    case JobParallelism::ZERO_BUBBLE_H1:
      return workload::PipelineScheduleKind::kZeroBubbleH1;
    case JobParallelism::DUAL_PIPE:
      return workload::PipelineScheduleKind::kDualPipe;
    default:
      fail("parallelism.pipeline_schedule", "unknown value " + std::to_string(static_cast<int>(s)));
  }
}

// Megatron-Core's --cp-comm-type names ("" = the default ring).
workload::CpCommType to_cp_comm_type(const std::string& name) {
  if (name.empty() || name == "p2p") return workload::CpCommType::kP2p;
  if (name == "all_gather") return workload::CpCommType::kAllGather;
  if (name == "a2a") return workload::CpCommType::kAllToAll;
  fail("parallelism.cp_comm_type", "must be \"p2p\", \"all_gather\" or \"a2a\" (got \"" + name + "\")");
}

workload::Optimizer to_optimizer(JobTraining::Optimizer o) {
  switch (o) {
    case JobTraining::ADAM:
      return workload::Optimizer::kAdam;
    case JobTraining::SGD:
      return workload::Optimizer::kSgd;
    default:
      fail("training.optimizer", "unknown value " + std::to_string(static_cast<int>(o)));
  }
}

// "0 = default" in the spec becomes "unset" (the Job's EfficiencyParams apply); no_op_overhead is an
// explicit 0 us.
// The activation recomputation the two training fields select (their agreement is checked in
// validate_job_spec).
workload::RecomputeMode to_recompute(const JobTraining& t) {
  switch (t.activation_recompute_mode()) {
    case JobTraining::RECOMPUTE_UNSPECIFIED:
      return t.activation_recompute() ? workload::RecomputeMode::kFull : workload::RecomputeMode::kNone;
    case JobTraining::NONE:
      return workload::RecomputeMode::kNone;
    case JobTraining::SELECTIVE:
      return workload::RecomputeMode::kSelective;
    case JobTraining::FULL:
      return workload::RecomputeMode::kFull;
    default:
      fail("training.activation_recompute_mode",
           "unknown value " + std::to_string(static_cast<int>(t.activation_recompute_mode())));
  }
}

// Megatron-LM's rules for --decoder-{first,last}-pipeline-num-layers (TransformerConfig.__post_init__,
// "Uneven PP"); models/workload/stage_layers.cpp applies the same rules to hand-built params.
void check_uneven_stages(std::uint64_t layers, std::uint32_t stages, std::uint32_t chunks,
                         std::uint32_t first, std::uint32_t last) {
  const char* any = first ? "parallelism.first_stage_layers" : "parallelism.last_stage_layers";
  if (stages < 2) fail(any, "needs parallelism.pipeline_parallel > 1 (got " + str(stages) + ")");
  std::uint64_t rest = layers;
  std::uint32_t middle = stages;
  for (const auto& [count, field] : {std::pair{first, "parallelism.first_stage_layers"},
                                     std::pair{last, "parallelism.last_stage_layers"}}) {
    if (count == 0) continue;
    if (count % chunks != 0) {
      fail(field,
           str(count) + " is not a multiple of parallelism.virtual_stages_per_rank (" + str(chunks) + ")");
    }
    if (count > rest) {
      fail(field, str(count) + " leaves a negative number of layers of model.num_layers=" + str(layers) +
                      " for the other stages");
    }
    rest -= count;
    --middle;
  }
  const char* field = last ? "parallelism.last_stage_layers" : "parallelism.first_stage_layers";
  if ((rest == 0) != (middle == 0)) {
    fail(field, str(rest) + " of model.num_layers=" + str(layers) + " remain for " + str(middle) +
                    " middle stage(s)");
  }
  if (middle > 0 && rest % middle != 0) {
    fail(field, "the remaining " + str(rest) + " of model.num_layers=" + str(layers) +
                    " do not split evenly over the " + str(middle) + " middle stage(s)");
  }
  if (middle > 0 && (rest / middle) % chunks != 0) {
    fail(field, "each middle stage gets " + str(rest / middle) +
                    " layers, not a multiple of parallelism.virtual_stages_per_rank (" + str(chunks) + ")");
  }
}

workload::ComputeModelParams to_compute_model(const JobComputeModel& c) {
  if (c.no_op_overhead() && c.op_overhead_us() != 0) {
    fail("compute_model.no_op_overhead", "set together with op_overhead_us");
  }
  workload::ComputeModelParams p;
  if (c.compute_eff_max() != 0) p.compute_eff_max = c.compute_eff_max();
  if (c.memory_eff_max() != 0) p.memory_eff_max = c.memory_eff_max();
  if (c.op_overhead_us() != 0) p.op_overhead_us = c.op_overhead_us();
  if (c.no_op_overhead()) p.op_overhead_us = 0.0;
  // 0 = unset = 1; the compute model checks that no scaled efficiency exceeds 1.
  const JobKernelScale& s = c.scale();
  for (const auto& [v, out, field] :
       {std::tuple{s.gemm_eff(), &p.scale.gemm_eff, "compute_model.scale.gemm_eff"},
        {s.sustained_clock(), &p.scale.sustained_clock, "compute_model.scale.sustained_clock"},
        {s.hbm_eff(), &p.scale.hbm_eff, "compute_model.scale.hbm_eff"},
        {s.kernel_gap(), &p.scale.kernel_gap, "compute_model.scale.kernel_gap"}}) {
    if (v < 0 || !std::isfinite(v)) fail(field, "must be > 0 (0 = 1; got " + std::to_string(v) + ")");
    *out = v == 0 ? 1.0 : v;
  }
  return p;
}

}  // namespace

JobSpec parse_job_spec_text(std::string_view text, std::string_view source) {
  JobSpec spec;
  if (const auto error = parse_text_format(text, spec))
    throw std::invalid_argument(std::string(source) + ":" + error->position() + ": " + error->message);
  return spec;
}

JobSpec parse_job_spec_json(std::string_view text, std::string_view source) {
  JobSpec spec;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  const auto status = google::protobuf::util::JsonStringToMessage(std::string(text), &spec, options);
  // protobuf appends the input near the error and a caret on further lines: keep the first (the error).
  if (!status.ok()) {
    const std::string message(status.message());
    throw std::invalid_argument(std::string(source) + ": " + message.substr(0, message.find('\n')));
  }
  return spec;
}

JobSpec load_job_spec(const std::string& path) {
  const std::string text = read_spec_file(path, "job spec");
  JobSpec spec = looks_like_json(text) ? parse_job_spec_json(strip_bom(text), path)
                                       : parse_job_spec_text(strip_bom(text), path);
  spec = normalized(std::move(spec));
  validate_job_spec(spec);
  return spec;
}

JobSpec normalized(JobSpec spec) {
  auto& m = *spec.mutable_model();
  if (m.num_kv_heads() == 0) m.set_num_kv_heads(m.num_attention_heads());
  if (m.dtype() == JobModel::DTYPE_UNSPECIFIED) m.set_dtype(JobModel::BF16);
  if (m.norm() == JobModel::NORM_UNSPECIFIED) m.set_norm(JobModel::LAYER_NORM);
  if (m.num_experts() == 0) m.set_num_experts(1);
  // moe_top_k has no default: a mixture of experts without it is an error (validate_job_spec), not top-1.
  auto& p = *spec.mutable_parallelism();
  for (auto [get, set] :
       {std::pair{&JobParallelism::tensor_parallel, &JobParallelism::set_tensor_parallel},
        std::pair{&JobParallelism::pipeline_parallel, &JobParallelism::set_pipeline_parallel},
        std::pair{&JobParallelism::data_parallel, &JobParallelism::set_data_parallel},
        std::pair{&JobParallelism::context_parallel, &JobParallelism::set_context_parallel},
        std::pair{&JobParallelism::expert_parallel, &JobParallelism::set_expert_parallel},
        std::pair{&JobParallelism::virtual_stages_per_rank, &JobParallelism::set_virtual_stages_per_rank}}) {
    if ((p.*get)() == 0) (p.*set)(1);
  }
  if (p.pipeline_schedule() == JobParallelism::SCHEDULE_UNSPECIFIED) {
    p.set_pipeline_schedule(JobParallelism::ONE_F_ONE_B);
  }
  auto& t = *spec.mutable_training();
  if (t.micro_batch_sequences() == 0) t.set_micro_batch_sequences(1);
  if (t.optimizer() == JobTraining::OPTIMIZER_UNSPECIFIED) t.set_optimizer(JobTraining::ADAM);
  return spec;
}

std::uint64_t world_size(const JobSpec& s) {
  const auto& p = s.parallelism();
  return std::uint64_t{p.tensor_parallel()} * p.pipeline_parallel() * p.data_parallel() *
         p.context_parallel();
}

std::uint64_t microbatches_per_step(const JobSpec& s) {
  return s.training().global_batch_sequences() /
         (std::uint64_t{s.training().micro_batch_sequences()} * s.parallelism().data_parallel());
}

void validate_job_spec(const JobSpec& s) {
  const auto& m = s.model();
  const auto& p = s.parallelism();
  const auto& t = s.training();
  if (s.gpu_type().empty()) fail("gpu_type", "must be set (e.g. \"H100-SXM\")");
  // Upper bounds (job_spec.hpp, kMax*) first: they keep the products below (world size, tokens, bytes) in
  // range, so that every later message is about a plausible job.
  require_at_most(m.num_layers(), kMaxLayers, "model.num_layers");
  require_at_most(m.hidden_size(), kMaxHiddenSize, "model.hidden_size");
  require_at_most(m.ffn_hidden_size(), kMaxFfnHiddenSize, "model.ffn_hidden_size");
  require_at_most(m.num_attention_heads(), kMaxAttentionHeads, "model.num_attention_heads");
  require_at_most(m.num_kv_heads(), kMaxAttentionHeads, "model.num_kv_heads");
  require_at_most(m.seq_length_tokens(), kMaxSeqLengthTokens, "model.seq_length_tokens");
  require_at_most(m.vocab_size(), kMaxVocabSize, "model.vocab_size");
  require_at_most(m.num_experts(), kMaxExperts, "model.num_experts");
  for (const auto& [value, field] :
       {std::pair{p.tensor_parallel(), "parallelism.tensor_parallel"},
        std::pair{p.pipeline_parallel(), "parallelism.pipeline_parallel"},
        std::pair{p.data_parallel(), "parallelism.data_parallel"},
        std::pair{p.context_parallel(), "parallelism.context_parallel"},
        std::pair{p.expert_parallel(), "parallelism.expert_parallel"},
        std::pair{p.virtual_stages_per_rank(), "parallelism.virtual_stages_per_rank"}}) {
    require_at_most(value, kMaxWorldSize, field);
  }
  require_at_most(world_size(s), kMaxWorldSize, "world_size_gpus (TP x PP x DP x CP)");
  // Schedules that need a pipeline (checked before the layer split, which PP must divide).
  const bool zero_bubble = p.pipeline_schedule() == JobParallelism::ZERO_BUBBLE_H1;
  const bool dual_pipe = p.pipeline_schedule() == JobParallelism::DUAL_PIPE;
  if ((zero_bubble || dual_pipe) && p.pipeline_parallel() < 2) {
    fail("parallelism.pipeline_schedule", std::string(zero_bubble ? "ZERO_BUBBLE_H1" : "DUAL_PIPE") +
                                              " needs parallelism.pipeline_parallel > 1 (got " +
                                              str(p.pipeline_parallel()) + ")");
  }
  if (dual_pipe && p.pipeline_parallel() % 2 != 0) {
    fail("parallelism.pipeline_schedule",
         "DUAL_PIPE needs an even parallelism.pipeline_parallel (got " + str(p.pipeline_parallel()) + ")");
  }
  require_at_most(t.micro_batch_sequences(), kMaxMicroBatchSequences, "training.micro_batch_sequences");
  require_at_most(std::uint64_t{t.micro_batch_sequences()} * m.seq_length_tokens(), kMaxMicroBatchTokens,
                  "training.micro_batch_sequences x model.seq_length_tokens");
  require_at_most(t.global_batch_sequences(), kMaxGlobalBatchSequences, "training.global_batch_sequences");
  require_at_most(t.grad_bucket_bytes(), kMaxBytes, "training.grad_bucket_bytes");
  require_at_most(t.checkpoint_bytes(), kMaxBytes, "training.checkpoint_bytes");
  require_at_most(t.dp_tree_chunk_bytes(), kMaxBytes, "training.dp_tree_chunk_bytes");
  // A GEMM split in more pieces than this is no longer the kernel the compute model times; the SM count
  // is checked against the GPU in the training program (below every profile's 108+ SMs here).
  require_at_most(t.tp_comm_overlap_splits(), 64, "training.tp_comm_overlap_splits");
  require_at_most(t.tp_comm_overlap_sms(), 64, "training.tp_comm_overlap_sms");
  require_positive(m.num_layers(), "model.num_layers");
  require_positive(m.hidden_size(), "model.hidden_size");
  require_positive(m.ffn_hidden_size(), "model.ffn_hidden_size");
  require_positive(m.num_attention_heads(), "model.num_attention_heads");
  require_positive(m.seq_length_tokens(), "model.seq_length_tokens");
  require_positive(m.vocab_size(), "model.vocab_size");
  // Multi-head latent attention sets its head widths itself (qk_nope/qk_rope/v_head_dim).
  if (m.kv_lora_rank() == 0) {
    require_divides(m.num_attention_heads(), "model.num_attention_heads", m.hidden_size(),
                    "model.hidden_size");
  }
  require_divides(m.num_kv_heads(), "model.num_kv_heads", m.num_attention_heads(),
                  "model.num_attention_heads");
  if (m.num_experts() > 1 && (m.moe_top_k() == 0 || m.moe_top_k() > m.num_experts())) {
    fail("model.moe_top_k", "must be within [1, model.num_experts=" + str(m.num_experts()) + "] (got " +
                                str(m.moe_top_k()) + (m.moe_top_k() == 0 ? ", or unset" : "") + ")");
  }
  if (m.num_experts() <= 1 && m.moe_top_k() > 1) fail("model.moe_top_k", "set but model.num_experts <= 1");
  for (const auto& [value, field] :
       {std::pair{m.moe_ffn_hidden_size(), "model.moe_ffn_hidden_size"},
        std::pair{m.num_shared_experts(), "model.num_shared_experts"},
        std::pair{m.shared_expert_ffn_hidden_size(), "model.shared_expert_ffn_hidden_size"},
        std::pair{m.first_dense_layers(), "model.first_dense_layers"}}) {
    if (value != 0 && m.num_experts() <= 1) fail(field, "set but model.num_experts <= 1");
  }
  require_at_most(m.moe_ffn_hidden_size(), kMaxFfnHiddenSize, "model.moe_ffn_hidden_size");
  require_at_most(m.shared_expert_ffn_hidden_size(), kMaxFfnHiddenSize,
                  "model.shared_expert_ffn_hidden_size");
  require_at_most(m.num_shared_experts(), kMaxExperts, "model.num_shared_experts");
  if (m.num_shared_experts() == 0 && m.shared_expert_ffn_hidden_size() != 0)
    fail("model.shared_expert_ffn_hidden_size", "set but model.num_shared_experts is 0");
  if (m.num_experts() > 1 && m.first_dense_layers() >= m.num_layers()) {
    fail("model.first_dense_layers",
         "must be < model.num_layers=" + str(m.num_layers()) + " (got " + str(m.first_dense_layers()) + ")");
  }
  if (!(m.moe_routing_skew() >= 0) || !std::isfinite(m.moe_routing_skew()) || m.moe_routing_skew() > 10) {
    fail("model.moe_routing_skew",
         "must be within [0, 10] (got " + std::to_string(m.moe_routing_skew()) + ")");
  }
  if ((m.moe_routing_skew() != 0 || m.moe_routing_seed() != 0) && m.num_experts() <= 1) {
    fail(m.moe_routing_skew() != 0 ? "model.moe_routing_skew" : "model.moe_routing_seed",
         "set but model.num_experts <= 1");
  }
  const bool mla = m.kv_lora_rank() != 0;
  for (const auto& [value, field] :
       {std::pair{m.q_lora_rank(), "model.q_lora_rank"}, std::pair{m.kv_lora_rank(), "model.kv_lora_rank"},
        std::pair{m.qk_nope_head_dim(), "model.qk_nope_head_dim"},
        std::pair{m.qk_rope_head_dim(), "model.qk_rope_head_dim"},
        std::pair{m.v_head_dim(), "model.v_head_dim"}}) {
    require_at_most(value, kMaxHiddenSize, field);
    if (!mla && value != 0) fail(field, "set but model.kv_lora_rank is 0 (multi-head latent attention off)");
  }
  if (mla) {
    require_positive(m.qk_nope_head_dim(), "model.qk_nope_head_dim");
    require_positive(m.qk_rope_head_dim(), "model.qk_rope_head_dim");
    require_positive(m.v_head_dim(), "model.v_head_dim");
  }

  require_divides(p.tensor_parallel(), "parallelism.tensor_parallel", m.num_attention_heads(),
                  "model.num_attention_heads");
  require_divides(p.tensor_parallel(), "parallelism.tensor_parallel", m.num_kv_heads(), "model.num_kv_heads");
  require_divides(p.tensor_parallel(), "parallelism.tensor_parallel", m.ffn_hidden_size(),
                  "model.ffn_hidden_size");
  if (m.num_experts() > 1) {
    require_divides(p.tensor_parallel(), "parallelism.tensor_parallel", m.moe_ffn_hidden_size(),
                    "model.moe_ffn_hidden_size");
    require_divides(p.tensor_parallel(), "parallelism.tensor_parallel",
                    std::uint64_t{m.num_shared_experts()} *
                        (m.shared_expert_ffn_hidden_size()
                             ? m.shared_expert_ffn_hidden_size()
                             : (m.moe_ffn_hidden_size() ? m.moe_ffn_hidden_size() : m.ffn_hidden_size())),
                    "model.num_shared_experts x shared expert width");
  }
  const bool uneven = p.first_stage_layers() != 0 || p.last_stage_layers() != 0;
  if (!uneven) {
    require_divides(p.pipeline_parallel(), "parallelism.pipeline_parallel", m.num_layers(),
                    "model.num_layers");
  }
  require_divides(p.context_parallel(), "parallelism.context_parallel", m.seq_length_tokens(),
                  "model.seq_length_tokens");
  if (p.expert_parallel() > 1) {
    if (m.num_experts() <= 1) fail("parallelism.expert_parallel", "> 1 needs model.num_experts > 1");
    require_divides(p.expert_parallel(), "parallelism.expert_parallel", m.num_experts(), "model.num_experts");
    require_divides(p.expert_parallel(), "parallelism.expert_parallel", p.data_parallel(),
                    "parallelism.data_parallel");
  }
  if (p.zero_stage() > 3)
    fail("parallelism.zero_stage", "must be 0, 1, 2 or 3 (got " + str(p.zero_stage()) + ")");
  if (p.sequence_parallel() && p.tensor_parallel() > 1) {
    require_divides(p.tensor_parallel(), "parallelism.tensor_parallel",
                    m.seq_length_tokens() / p.context_parallel(),
                    "model.seq_length_tokens / parallelism.context_parallel");
  }
  if (p.hierarchical_all_to_all() && p.expert_parallel() <= 1) {
    fail("parallelism.hierarchical_all_to_all", "set but parallelism.expert_parallel <= 1");
  }
  for (const auto& [value, field] : {std::pair{m.attention_dropout(), "model.attention_dropout"},
                                     std::pair{m.hidden_dropout(), "model.hidden_dropout"}}) {
    if (!(value >= 0 && value < 1)) fail(field, "must be within [0, 1) (got " + std::to_string(value) + ")");
  }
  const std::string& cp_comm = p.cp_comm_type();
  const workload::CpCommType cp_type = to_cp_comm_type(cp_comm);
  if (cp_type != workload::CpCommType::kP2p) {
    if (p.context_parallel() <= 1) {
      fail("parallelism.cp_comm_type", "\"" + cp_comm + "\" set but parallelism.context_parallel is 1");
    }
    // Transformer Engine runs context parallelism only inside its fused attention.
    if (!m.fused_attention())
      fail("parallelism.cp_comm_type", "\"" + cp_comm + "\" needs model.fused_attention");
    if (cp_type == workload::CpCommType::kAllToAll) {
      // The all-to-all hands each CP rank whole heads: the heads a tensor-parallel rank holds must split.
      const std::uint64_t kv_heads = m.kv_lora_rank() != 0 ? m.num_attention_heads() : m.num_kv_heads();
      const std::uint64_t tp = p.tensor_parallel();
      if ((m.num_attention_heads() / tp) % p.context_parallel() != 0 ||
          (kv_heads / tp) % p.context_parallel()) {
        fail("parallelism.cp_comm_type",
             "\"a2a\" needs the attention heads per tensor-parallel rank (" +
                 str(m.num_attention_heads() / tp) + " query, " + str(kv_heads / tp) +
                 " key/value) divisible by parallelism.context_parallel (" + str(p.context_parallel()) + ")");
      }
    }
  }
  const bool interleaved = p.pipeline_schedule() == JobParallelism::INTERLEAVED_1F1B;
  if (!interleaved && p.virtual_stages_per_rank() != 1) {
    fail("parallelism.virtual_stages_per_rank", "needs pipeline_schedule INTERLEAVED_1F1B");
  }
  if (uneven && p.pipeline_schedule() == JobParallelism::DUAL_PIPE) {
    fail(p.first_stage_layers() != 0 ? "parallelism.first_stage_layers" : "parallelism.last_stage_layers",
         "uneven stages are not supported with pipeline_schedule DUAL_PIPE");
  }
  if (uneven) {
    check_uneven_stages(m.num_layers(), p.pipeline_parallel(), interleaved ? p.virtual_stages_per_rank() : 1,
                        p.first_stage_layers(), p.last_stage_layers());
  } else if (interleaved) {
    require_divides(std::uint64_t{p.pipeline_parallel()} * p.virtual_stages_per_rank(),
                    "parallelism.pipeline_parallel x parallelism.virtual_stages_per_rank", m.num_layers(),
                    "model.num_layers");
  }

  const std::uint64_t w = world_size(s);
  if (s.world_size_gpus() != 0 && s.world_size_gpus() != w) {
    fail("world_size_gpus", str(s.world_size_gpus()) + " != TP x PP x DP x CP = " + str(w));
  }
  require_positive(t.global_batch_sequences(), "training.global_batch_sequences");
  const std::uint64_t per_replica = std::uint64_t{t.micro_batch_sequences()} * p.data_parallel();
  if (t.global_batch_sequences() % per_replica != 0) {
    fail("training.global_batch_sequences",
         str(t.global_batch_sequences()) + " is not a multiple of micro_batch_sequences x data_parallel (" +
             str(per_replica) + ")");
  }
  const std::uint64_t mb = microbatches_per_step(s);
  if (interleaved && p.virtual_stages_per_rank() > 1 && mb % p.pipeline_parallel() != 0) {
    fail("training.global_batch_sequences", "interleaved 1F1B needs the microbatch count (" + str(mb) +
                                                ") to be a multiple of pipeline_parallel (" +
                                                str(p.pipeline_parallel()) + ")");
  }
  // DualPipe splits the micro-batches evenly over its two directions and needs at least 2 x PP of them
  // (deepseek-ai/DualPipe, dualpipe.py: num_chunks even and >= 2 x num_ranks).
  if (dual_pipe && (mb % 2 != 0 || mb < 2ull * p.pipeline_parallel())) {
    fail("parallelism.pipeline_schedule",
         "DUAL_PIPE needs an even microbatch count >= 2 x pipeline_parallel (" +
             str(2ull * p.pipeline_parallel()) + "), got " + str(mb));
  }
  const std::string& algorithm = t.dp_allreduce_algorithm();
  if (!algorithm.empty() && algorithm != "auto" && algorithm != "ring" && algorithm != "tree") {
    fail("training.dp_allreduce_algorithm",
         "must be \"auto\", \"ring\" or \"tree\" (got \"" + algorithm + "\")");
  }
  if (algorithm == "tree" && p.zero_stage() != 0) {
    fail("training.dp_allreduce_algorithm",
         "\"tree\" needs parallelism.zero_stage 0 (got " + str(p.zero_stage()) +
             "): ZeRO reduce-scatters and all-gathers the gradients, which only the ring implements");
  }
  const std::string& protocol = t.nccl_protocol();
  if (!protocol.empty() && protocol != "auto" && protocol != "ll" && protocol != "ll128" &&
      protocol != "simple" && protocol != "none") {
    fail("training.nccl_protocol",
         "must be \"auto\", \"ll\", \"ll128\", \"simple\" or \"none\" (got \"" + protocol + "\")");
  }
  if (t.overlap_param_gather() && p.zero_stage() != 1 && p.zero_stage() != 2) {
    fail("training.overlap_param_gather",
         "needs parallelism.zero_stage 1 or 2 (got " + str(p.zero_stage()) +
             "): only the distributed optimizer all-gathers its parameters after the optimizer step");
  }
  if (t.no_cp_comm_overlap() && p.context_parallel() <= 1) {
    fail("training.no_cp_comm_overlap", "set but parallelism.context_parallel is " +
                                            str(std::max(1u, p.context_parallel())) +
                                            ": there is no KV exchange to overlap");
  }
  if (t.no_cp_comm_overlap() && cp_type != workload::CpCommType::kP2p) {
    fail("training.no_cp_comm_overlap", "set but parallelism.cp_comm_type is \"" + p.cp_comm_type() +
                                            "\": only the p2p ring overlaps its exchange with the attention");
  }
  if (t.no_zero3_prefetch() && p.zero_stage() != 3) {
    fail("training.no_zero3_prefetch", "set but parallelism.zero_stage is " + str(p.zero_stage()) +
                                           ": only ZeRO-3 gathers parameters per layer");
  }
  if (algorithm == "ring" && t.dp_tree_chunk_bytes() != 0) {
    fail("training.dp_tree_chunk_bytes", "set but training.dp_allreduce_algorithm is \"ring\"");
  }
  if (t.activation_recompute() && t.activation_recompute_mode() != JobTraining::RECOMPUTE_UNSPECIFIED &&
      t.activation_recompute_mode() != JobTraining::FULL) {
    fail("training.activation_recompute_mode",
         JobTraining::ActivationRecompute_Name(t.activation_recompute_mode()) +
             " contradicts training.activation_recompute: true (which means FULL); set only one of them");
  }
  if (t.checkpoint_interval_steps() == 0 && t.checkpoint_bytes() != 0) {
    fail("training.checkpoint_bytes", "set but training.checkpoint_interval_steps is 0");
  }
}

workload::JobParams to_job_params(const JobSpec& spec) {
  const JobSpec s = normalized(spec);
  validate_job_spec(s);
  workload::JobParams p;
  p.name = s.name();
  p.gpu_type = s.gpu_type();

  const auto& sm = s.model();
  auto& m = p.model;
  m.num_layers = sm.num_layers();
  m.hidden_size = sm.hidden_size();
  m.ffn_hidden_size = sm.ffn_hidden_size();
  m.num_attention_heads = sm.num_attention_heads();
  m.num_kv_heads = sm.num_kv_heads();
  m.seq_length_tokens = sm.seq_length_tokens();
  m.vocab_size = sm.vocab_size();
  m.num_experts = sm.num_experts();
  m.moe_top_k = sm.num_experts() > 1 ? sm.moe_top_k() : 1;
  m.dtype = to_dtype(sm.dtype());
  m.norm = to_norm(sm.norm());
  m.gated_mlp = sm.gated_mlp();
  m.linear_bias = sm.linear_bias();
  m.learned_position_embeddings = sm.learned_position_embeddings();
  m.untied_embeddings = sm.untied_embeddings();
  m.fused_attention = sm.fused_attention();
  m.causal_attention = !sm.bidirectional_attention();
  m.attention_dropout = sm.attention_dropout();
  m.hidden_dropout = sm.hidden_dropout();
  m.cross_entropy_loss_fusion = sm.cross_entropy_loss_fusion();
  m.moe_ffn_hidden_size = sm.moe_ffn_hidden_size();
  m.num_shared_experts = sm.num_shared_experts();
  m.shared_expert_ffn_hidden_size = sm.shared_expert_ffn_hidden_size();
  m.first_dense_layers = sm.first_dense_layers();
  m.q_lora_rank = sm.q_lora_rank();
  m.kv_lora_rank = sm.kv_lora_rank();
  m.qk_nope_head_dim = sm.qk_nope_head_dim();
  m.qk_rope_head_dim = sm.qk_rope_head_dim();
  m.v_head_dim = sm.v_head_dim();
  m.moe_routing_skew = sm.moe_routing_skew();
  m.moe_routing_seed = sm.moe_routing_seed();

  const auto& sp = s.parallelism();
  auto& d = p.parallelism;
  d.tensor_parallel = sp.tensor_parallel();
  d.pipeline_parallel = sp.pipeline_parallel();
  d.data_parallel = sp.data_parallel();
  d.context_parallel = sp.context_parallel();
  d.expert_parallel = sp.expert_parallel();
  d.pipeline_schedule = to_schedule(sp.pipeline_schedule());
  d.virtual_stages_per_rank = sp.virtual_stages_per_rank();
  d.zero_stage = sp.zero_stage();
  d.sequence_parallel = sp.sequence_parallel();
  d.pipeline_scatter_gather = sp.pipeline_scatter_gather();
  d.pipeline_p2p_sync = sp.pipeline_p2p_sync();
  d.first_stage_layers = sp.first_stage_layers();
  d.last_stage_layers = sp.last_stage_layers();
  d.hierarchical_all_to_all = sp.hierarchical_all_to_all();
  d.cp_comm_type = to_cp_comm_type(sp.cp_comm_type());

  const auto& st = s.training();
  auto& t = p.training;
  t.global_batch_sequences = st.global_batch_sequences();
  t.micro_batch_sequences = st.micro_batch_sequences();
  t.activation_recompute = to_recompute(st);
  t.grad_bucket_bytes = st.grad_bucket_bytes();
  t.optimizer = to_optimizer(st.optimizer());
  t.grad_reduce_fp32 = st.grad_reduce_fp32();
  t.checkpoint_interval_steps = st.checkpoint_interval_steps();
  t.checkpoint_bytes = st.checkpoint_bytes();
  if (!st.dp_allreduce_algorithm().empty()) t.dp_allreduce_algorithm = st.dp_allreduce_algorithm();
  t.dp_tree_chunk_bytes = st.dp_tree_chunk_bytes();
  t.allow_hbm_overflow = st.allow_hbm_overflow();
  t.overlap_grad_reduce = st.overlap_grad_reduce();
  t.tp_comm_overlap = st.tp_comm_overlap();
  if (st.tp_comm_overlap_splits() != 0) t.tp_comm_overlap_splits = st.tp_comm_overlap_splits();
  if (st.tp_comm_overlap_sms() != 0) t.tp_comm_overlap_sms = st.tp_comm_overlap_sms();
  if (!st.nccl_protocol().empty()) t.nccl_protocol = st.nccl_protocol();
  t.free_reductions = st.free_reductions();
  t.overlap_param_gather = st.overlap_param_gather();
  t.cp_comm_overlap = !st.no_cp_comm_overlap();
  t.zero3_prefetch = !st.no_zero3_prefetch();

  p.compute_model = to_compute_model(s.compute_model());
  return p;
}

}  // namespace warpsim::spec
