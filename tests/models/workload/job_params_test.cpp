// spec::to_job_params: a JobSpec's "0 = default" fields become explicit values, its enums the workload
// model's, and bad input an error naming the spec field; Job takes the plain params.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "experiment/spec/job_spec.hpp"
#include "models/workload/job.hpp"
#include "tests/models/workload/test_jobs.hpp"

namespace warpsim::workload {
namespace {

using testing::dense_spec_text;
using testing::moe_spec_text;

JobParams params_of(const std::string& text) {
  return spec::to_job_params(spec::parse_job_spec_text(text));
}

std::string error_of(const spec::JobSpec& s) {
  try {
    (void)spec::to_job_params(s);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(JobParams, DefaultsAreExplicit) {
  const JobParams p = params_of(
      "gpu_type: \"H100-SXM\"\n"
      "model { num_layers: 2 hidden_size: 256 ffn_hidden_size: 1024 num_attention_heads: 4\n"
      "        seq_length_tokens: 128 vocab_size: 1000 }\n"
      "training { global_batch_sequences: 8 }\n");
  EXPECT_EQ(p.name, "");
  EXPECT_EQ(p.gpu_type, "H100-SXM");
  EXPECT_EQ(p.model.num_kv_heads, 4u);
  EXPECT_EQ(p.model.num_experts, 1u);
  EXPECT_EQ(p.model.moe_top_k, 1u);
  EXPECT_EQ(p.model.dtype, DType::kBf16);
  EXPECT_EQ(p.model.norm, Norm::kLayerNorm);
  EXPECT_FALSE(p.model.gated_mlp);
  for (const std::uint32_t degree : {p.parallelism.tensor_parallel, p.parallelism.pipeline_parallel,
                                     p.parallelism.data_parallel, p.parallelism.context_parallel,
                                     p.parallelism.expert_parallel, p.parallelism.virtual_stages_per_rank}) {
    EXPECT_EQ(degree, 1u);
  }
  EXPECT_EQ(p.parallelism.pipeline_schedule, PipelineScheduleKind::kOneFOneB);
  EXPECT_EQ(p.parallelism.zero_stage, 0u);
  EXPECT_EQ(p.training.global_batch_sequences, 8u);
  EXPECT_EQ(p.training.micro_batch_sequences, 1u);
  EXPECT_EQ(p.training.optimizer, Optimizer::kAdam);
  EXPECT_EQ(p.training.dp_allreduce_algorithm, "auto");
  EXPECT_EQ(p.training.dp_tree_chunk_bytes, 0u);
  EXPECT_EQ(p.training.checkpoint_interval_steps, 0u);
  EXPECT_FALSE(p.compute_model.compute_eff_max.has_value());
  EXPECT_FALSE(p.compute_model.memory_eff_max.has_value());
  EXPECT_FALSE(p.compute_model.op_overhead_us.has_value());
  EXPECT_EQ(p.world_size_gpus(), 1u);
  EXPECT_EQ(p.microbatches_per_step(), 8u);
}

TEST(JobParams, FieldsAndDerivedSizesCarryOver) {
  const JobParams p = params_of(dense_spec_text(
      "tensor_parallel: 2 pipeline_parallel: 2 data_parallel: 2 context_parallel: 2 zero_stage: 1 "
      "sequence_parallel: true pipeline_p2p_sync: true",
      "global_batch_sequences: 16 micro_batch_sequences: 2 activation_recompute: true "
      "grad_bucket_bytes: 1000 grad_reduce_fp32: true checkpoint_interval_steps: 3 checkpoint_bytes: 7"));
  EXPECT_EQ(p.name, "gpt-small");
  EXPECT_EQ(p.model.num_layers, 8u);
  EXPECT_EQ(p.model.hidden_size, 2048u);
  EXPECT_EQ(p.model.ffn_hidden_size, 8192u);
  EXPECT_EQ(p.model.seq_length_tokens, 1024u);
  EXPECT_EQ(p.model.vocab_size, 32000u);
  EXPECT_TRUE(p.model.linear_bias);
  EXPECT_EQ(p.parallelism.tensor_parallel, 2u);
  EXPECT_EQ(p.parallelism.context_parallel, 2u);
  EXPECT_EQ(p.parallelism.zero_stage, 1u);
  EXPECT_TRUE(p.parallelism.sequence_parallel);
  EXPECT_TRUE(p.parallelism.pipeline_p2p_sync);
  EXPECT_FALSE(p.parallelism.pipeline_scatter_gather);
  EXPECT_EQ(p.training.activation_recompute, RecomputeMode::kFull);
  EXPECT_EQ(p.training.grad_bucket_bytes, 1000u);
  EXPECT_TRUE(p.training.grad_reduce_fp32);
  EXPECT_EQ(p.training.checkpoint_interval_steps, 3u);
  EXPECT_EQ(p.training.checkpoint_bytes, 7u);
  EXPECT_EQ(p.world_size_gpus(), 16u);
  EXPECT_EQ(p.microbatches_per_step(), 4u);  // 16 / (2 x 2)

  const JobParams moe =
      params_of(moe_spec_text("data_parallel: 2 expert_parallel: 2", "global_batch_sequences: 4"));
  EXPECT_EQ(moe.model.num_kv_heads, 4u);
  EXPECT_EQ(moe.model.num_experts, 8u);
  EXPECT_EQ(moe.model.moe_top_k, 2u);
  EXPECT_EQ(moe.parallelism.expert_parallel, 2u);
  EXPECT_TRUE(moe.model.gated_mlp);
  EXPECT_TRUE(moe.model.untied_embeddings);
  EXPECT_TRUE(moe.model.fused_attention);
  // Causal self-attention unless the spec says bidirectional.
  EXPECT_TRUE(moe.model.causal_attention);
  spec::JobSpec bidirectional = spec::parse_job_spec_text(dense_spec_text("", "global_batch_sequences: 8"));
  bidirectional.mutable_model()->set_bidirectional_attention(true);
  EXPECT_FALSE(spec::to_job_params(bidirectional).model.causal_attention);
  // The eager cross entropy unless the spec asks for Megatron-Core's fused one.
  EXPECT_FALSE(moe.model.cross_entropy_loss_fusion);
  spec::JobSpec fused_loss = spec::parse_job_spec_text(dense_spec_text("", "global_batch_sequences: 8"));
  fused_loss.mutable_model()->set_cross_entropy_loss_fusion(true);
  EXPECT_TRUE(spec::to_job_params(fused_loss).model.cross_entropy_loss_fusion);
}

TEST(JobParams, EachEnumValueMaps) {
  spec::JobSpec s = spec::parse_job_spec_text(dense_spec_text("", "global_batch_sequences: 8"));
  const std::pair<spec::JobModel::DType, DType> dtypes[] = {{spec::JobModel::BF16, DType::kBf16},
                                                            {spec::JobModel::FP16, DType::kFp16},
                                                            {spec::JobModel::FP8, DType::kFp8},
                                                            {spec::JobModel::FP32, DType::kFp32}};
  for (const auto& [from, to] : dtypes) {
    s.mutable_model()->set_dtype(from);
    EXPECT_EQ(spec::to_job_params(s).model.dtype, to);
  }
  s.mutable_model()->set_norm(spec::JobModel::LAYER_NORM);
  EXPECT_EQ(spec::to_job_params(s).model.norm, Norm::kLayerNorm);
  s.mutable_model()->set_norm(spec::JobModel::RMS_NORM);
  EXPECT_EQ(spec::to_job_params(s).model.norm, Norm::kRmsNorm);
  s.mutable_training()->set_optimizer(spec::JobTraining::ADAM);
  EXPECT_EQ(spec::to_job_params(s).training.optimizer, Optimizer::kAdam);
  s.mutable_training()->set_optimizer(spec::JobTraining::SGD);
  EXPECT_EQ(spec::to_job_params(s).training.optimizer, Optimizer::kSgd);

  const JobParams one_f_one_b = params_of(
      dense_spec_text("pipeline_parallel: 2 pipeline_schedule: ONE_F_ONE_B", "global_batch_sequences: 8"));
  EXPECT_EQ(one_f_one_b.parallelism.pipeline_schedule, PipelineScheduleKind::kOneFOneB);
  const JobParams interleaved = params_of(
      dense_spec_text("pipeline_parallel: 2 pipeline_schedule: INTERLEAVED_1F1B virtual_stages_per_rank: 2",
                      "global_batch_sequences: 8"));
  EXPECT_EQ(interleaved.parallelism.pipeline_schedule, PipelineScheduleKind::kInterleaved1F1B);
  EXPECT_EQ(interleaved.parallelism.virtual_stages_per_rank, 2u);

  const JobParams tree = params_of(dense_spec_text(
      "data_parallel: 2",
      "global_batch_sequences: 8 dp_allreduce_algorithm: \"tree\" dp_tree_chunk_bytes: 4096"));
  EXPECT_EQ(tree.training.dp_allreduce_algorithm, "tree");
  EXPECT_EQ(tree.training.dp_tree_chunk_bytes, 4096u);
}

TEST(JobParams, ComputeModelOverrides) {
  spec::JobSpec s = spec::parse_job_spec_text(dense_spec_text("", "global_batch_sequences: 8"));
  s.mutable_compute_model()->set_compute_eff_max(0.5);
  s.mutable_compute_model()->set_memory_eff_max(0.75);
  s.mutable_compute_model()->set_op_overhead_us(2.5);
  JobParams p = spec::to_job_params(s);
  EXPECT_EQ(p.compute_model.compute_eff_max, 0.5);
  EXPECT_EQ(p.compute_model.memory_eff_max, 0.75);
  EXPECT_EQ(p.compute_model.op_overhead_us, 2.5);
  const Job job(p);
  EXPECT_EQ(job.compute().params().compute_eff_max, 0.5);
  EXPECT_EQ(job.compute().params().memory_eff_max, 0.75);
  EXPECT_DOUBLE_EQ(job.compute().params().op_overhead_s, 2.5e-6);

  s.clear_compute_model();
  s.mutable_compute_model()->set_no_op_overhead(true);
  p = spec::to_job_params(s);
  ASSERT_TRUE(p.compute_model.op_overhead_us.has_value());
  EXPECT_EQ(*p.compute_model.op_overhead_us, 0.0);
  EXPECT_EQ(Job(p).compute().params().op_overhead_s, 0.0);

  s.mutable_compute_model()->set_op_overhead_us(1);
  EXPECT_EQ(error_of(s), "job spec: compute_model.no_op_overhead: set together with op_overhead_us");
}

TEST(JobParams, BadValuesNameTheField) {
  spec::JobSpec s =
      spec::parse_job_spec_text(dense_spec_text("tensor_parallel: 3", "global_batch_sequences: 8"));
  EXPECT_EQ(error_of(s),
            "job spec: parallelism.tensor_parallel: 3 does not divide model.num_attention_heads (16)");
  s = spec::parse_job_spec_text(
      dense_spec_text("", "global_batch_sequences: 8 dp_allreduce_algorithm: \"butterfly\""));
  EXPECT_EQ(error_of(s),
            "job spec: training.dp_allreduce_algorithm: must be \"auto\", \"ring\" or \"tree\" (got "
            "\"butterfly\")");
  s = spec::parse_job_spec_text(dense_spec_text("", "global_batch_sequences: 8"));
  s.clear_gpu_type();
  EXPECT_EQ(error_of(s), "job spec: gpu_type: must be set (e.g. \"H100-SXM\")");

  // Numbers the .proto does not define (text format and JSON accept them for proto3 enums).
  s = spec::parse_job_spec_text(dense_spec_text("", "global_batch_sequences: 8"));
  s.mutable_model()->set_dtype(static_cast<spec::JobModel::DType>(9));
  EXPECT_EQ(error_of(s), "job spec: model.dtype: unknown value 9");
  s = spec::parse_job_spec_text(dense_spec_text("", "global_batch_sequences: 8"));
  s.mutable_model()->set_norm(static_cast<spec::JobModel::Norm>(7));
  EXPECT_EQ(error_of(s), "job spec: model.norm: unknown value 7");
  s = spec::parse_job_spec_text(dense_spec_text("", "global_batch_sequences: 8"));
  s.mutable_parallelism()->set_pipeline_schedule(static_cast<spec::JobParallelism::PipelineSchedule>(5));
  EXPECT_EQ(error_of(s), "job spec: parallelism.pipeline_schedule: unknown value 5");
  s = spec::parse_job_spec_text(dense_spec_text("", "global_batch_sequences: 8"));
  s.mutable_training()->set_optimizer(static_cast<spec::JobTraining::Optimizer>(3));
  EXPECT_EQ(error_of(s), "job spec: training.optimizer: unknown value 3");
}

TEST(JobParams, JobChecksWhatTheWorkloadModelOwns) {
  JobParams p = params_of(dense_spec_text("", "global_batch_sequences: 8"));
  p.gpu_type = "TPU-v9";
  try {
    Job job(p);
    FAIL() << "accepted an unknown GPU type";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("job spec: gpu_type"), std::string::npos) << e.what();
  }
  // Params built by hand that the arithmetic cannot take: refused, pointing at the spec's validation.
  p = params_of(dense_spec_text("", "global_batch_sequences: 8"));
  p.parallelism.pipeline_parallel = 3;  // does not divide 8 layers
  EXPECT_THROW(Job{p}, std::invalid_argument);
  p = params_of(dense_spec_text("", "global_batch_sequences: 8"));
  p.model.num_attention_heads = 0;
  EXPECT_THROW(Job{p}, std::invalid_argument);
}

TEST(JobParams, JobKeepsTheParams) {
  const JobParams p =
      params_of(dense_spec_text("tensor_parallel: 2 pipeline_parallel: 2", "global_batch_sequences: 8"));
  const Job job(p);
  EXPECT_EQ(job.params().name, p.name);
  EXPECT_EQ(job.params().parallelism.pipeline_parallel, 2u);
  EXPECT_EQ(job.world_size(), 4u);
  EXPECT_EQ(job.microbatches(), 8u);
  EXPECT_EQ(job.degrees().tp, 2u);
  EXPECT_EQ(job.shape().hidden, 2048u);
}

}  // namespace
}  // namespace warpsim::workload
