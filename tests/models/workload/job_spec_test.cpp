// JobSpec parsing (text and JSON) and validation errors that name the field.
#include <gtest/gtest.h>

#include <cmath>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "experiment/spec/job_spec.hpp"
#include "models/workload/job.hpp"
#include "tests/models/workload/test_jobs.hpp"

namespace warpsim::workload {
namespace {

using testing::dense_spec_text;

std::string error_of(const std::string& text) {
  try {
    Job job(spec::to_job_params(spec::parse_job_spec_text(text)));
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(JobSpec, TextAndJsonGiveTheSameJob) {
  const auto text = dense_spec_text("tensor_parallel: 2 pipeline_parallel: 2 data_parallel: 2",
                                    "global_batch_sequences: 16 micro_batch_sequences: 2");
  const spec::JobSpec a = spec::parse_job_spec_text(text);
  const spec::JobSpec b = spec::parse_job_spec_json(
      R"({"name": "gpt-small", "gpuType": "H100-SXM",
          "model": {"numLayers": 8, "hiddenSize": 2048, "ffnHiddenSize": 8192, "numAttentionHeads": 16,
                    "seqLengthTokens": 1024, "vocabSize": 32000, "dtype": "BF16", "linearBias": true},
          "parallelism": {"tensor_parallel": 2, "pipeline_parallel": 2, "data_parallel": 2},
          "training": {"globalBatchSequences": "16", "microBatchSequences": 2}})");
  EXPECT_EQ(a.SerializeAsString(), b.SerializeAsString());
  const Job job(spec::to_job_params(a));
  EXPECT_EQ(job.world_size(), 8u);
  EXPECT_EQ(job.microbatches(), 4u);  // 16 / (2 x 2)
}

TEST(JobSpec, ParseErrorsCarryPositionOrField) {
  try {
    spec::parse_job_spec_text("model { num_layers: -3 }", "bad.txtpb");
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("bad.txtpb:1:"), std::string::npos) << e.what();
  }
  EXPECT_THROW(spec::parse_job_spec_json(R"({"model": {"noSuchField": 1}})"), std::invalid_argument);
}

TEST(JobSpec, ValidationNamesTheField) {
  const std::string train = "global_batch_sequences: 16";
  EXPECT_NE(error_of(dense_spec_text("tensor_parallel: 3", train)).find("parallelism.tensor_parallel"),
            std::string::npos);
  EXPECT_NE(error_of(dense_spec_text("pipeline_parallel: 3", train)).find("parallelism.pipeline_parallel"),
            std::string::npos);
  EXPECT_NE(
      error_of(dense_spec_text("tensor_parallel: 2 data_parallel: 2", train, 8)).find("world_size_gpus"),
      std::string::npos);
  EXPECT_NE(error_of(dense_spec_text("data_parallel: 3", train)).find("training.global_batch_sequences"),
            std::string::npos);
  EXPECT_NE(
      error_of(dense_spec_text("data_parallel: 2", "global_batch_sequences: 16 micro_batch_sequences: 3"))
          .find("training.global_batch_sequences"),
      std::string::npos);
  std::string gpu = dense_spec_text("", train);
  gpu.replace(gpu.find("H100-SXM"), 8, "TPU-v9");
  const std::string gpu_error = error_of(gpu);
  EXPECT_NE(gpu_error.find("gpu_type"), std::string::npos) << gpu_error;
  EXPECT_NE(gpu_error.find("A100-80GB"), std::string::npos) << "lists the known types: " << gpu_error;
  EXPECT_NE(error_of(dense_spec_text("pipeline_parallel: 2 pipeline_schedule: INTERLEAVED_1F1B "
                                     "virtual_stages_per_rank: 2",
                                     "global_batch_sequences: 3"))
                .find("training.global_batch_sequences"),
            std::string::npos);
  EXPECT_NE(error_of(dense_spec_text("zero_stage: 4", train)).find("parallelism.zero_stage"),
            std::string::npos);
  EXPECT_NE(error_of(dense_spec_text("expert_parallel: 2 data_parallel: 2", train))
                .find("parallelism.expert_parallel"),
            std::string::npos);
  std::string fp8 = dense_spec_text("", train);
  fp8.replace(fp8.find("H100-SXM"), 8, "A100-80GB");
  fp8.replace(fp8.find("BF16"), 4, "FP8");
  EXPECT_NE(error_of(fp8).find("model.dtype"), std::string::npos);
  EXPECT_EQ(error_of(dense_spec_text("tensor_parallel: 2", train)), "");
}

// The zero-bubble and DualPipe schedules: what each needs is refused naming parallelism.pipeline_schedule.
TEST(JobSpec, PipelineScheduleRequirementsNameTheField) {
  const std::string train = "global_batch_sequences: 16";
  const auto error = [&](const std::string& par, const std::string& t) {
    return error_of(dense_spec_text(par, t));
  };
  for (const char* s : {"ZERO_BUBBLE_H1", "DUAL_PIPE"}) {
    const std::string e = error(std::string("pipeline_schedule: ") + s, train);
    EXPECT_NE(e.find("parallelism.pipeline_schedule"), std::string::npos) << e;
    EXPECT_NE(e.find("pipeline_parallel > 1"), std::string::npos) << e;
    // Virtual stages belong to INTERLEAVED_1F1B only.
    const std::string v =
        error(std::string("pipeline_parallel: 2 virtual_stages_per_rank: 2 pipeline_schedule: ") + s, train);
    EXPECT_NE(v.find("parallelism.virtual_stages_per_rank"), std::string::npos) << v;
  }
  // DualPipe: an even PP, and an even micro-batch count of at least 2 x PP (16 sequences = 16 micro-batches).
  std::string e = error("pipeline_parallel: 3 pipeline_schedule: DUAL_PIPE", "global_batch_sequences: 18");
  EXPECT_NE(e.find("parallelism.pipeline_schedule"), std::string::npos) << e;
  EXPECT_NE(e.find("even"), std::string::npos) << e;
  e = error("pipeline_parallel: 4 pipeline_schedule: DUAL_PIPE", "global_batch_sequences: 6");
  EXPECT_NE(e.find("parallelism.pipeline_schedule"), std::string::npos) << e;
  EXPECT_NE(e.find(">= 2 x pipeline_parallel"), std::string::npos) << e;
  e = error("pipeline_parallel: 2 pipeline_schedule: DUAL_PIPE", "global_batch_sequences: 9");
  EXPECT_NE(e.find("parallelism.pipeline_schedule"), std::string::npos) << e;
  e = error("pipeline_parallel: 4 pipeline_schedule: DUAL_PIPE first_stage_layers: 1 last_stage_layers: 1",
            "global_batch_sequences: 8");
  EXPECT_NE(e.find("parallelism.first_stage_layers"), std::string::npos) << e;
  EXPECT_EQ(error("pipeline_parallel: 2 pipeline_schedule: ZERO_BUBBLE_H1", train), "");
  EXPECT_EQ(error("pipeline_parallel: 4 pipeline_schedule: DUAL_PIPE", train), "");
}

// DeepSeek-style MoE fields (model 17-27, parallelism 14): a bad value is refused naming its field.
std::string deepseek_text(const std::string& model_extra, const std::string& par) {
  return "gpu_type: \"H800\" model { num_layers: 4 hidden_size: 512 ffn_hidden_size: 2048 "
         "num_attention_heads: 8 seq_length_tokens: 512 vocab_size: 8000 num_experts: 16 moe_top_k: 4 "
         "moe_ffn_hidden_size: 256 num_shared_experts: 1 first_dense_layers: 1 q_lora_rank: 128 "
         "kv_lora_rank: 64 qk_nope_head_dim: 32 qk_rope_head_dim: 16 v_head_dim: 32 gated_mlp: true " +
         model_extra + " } parallelism { pipeline_parallel: 2 data_parallel: 8 " + par +
         " } training { global_batch_sequences: 16 }";
}

TEST(JobSpec, DeepSeekMoeFieldsAreValidated) {
  EXPECT_EQ(
      error_of(deepseek_text("moe_routing_skew: 0.5", "expert_parallel: 8 hierarchical_all_to_all: true")),
      "");
  const auto names = [](const std::string& text, const char* field) {
    const std::string e = error_of(text);
    return e.find(field) != std::string::npos && e.find('\n') == std::string::npos;
  };
  EXPECT_TRUE(names(deepseek_text("", "expert_parallel: 3"), "parallelism.expert_parallel"));
  // EP 8 divides data_parallel 8 but not 12 routed experts: the error names both fields.
  std::string twelve = deepseek_text("", "expert_parallel: 8");
  twelve.replace(twelve.find("num_experts: 16"), 15, "num_experts: 12");
  EXPECT_TRUE(names(twelve, "parallelism.expert_parallel"));
  EXPECT_NE(error_of(twelve).find("model.num_experts"), std::string::npos) << error_of(twelve);
  std::string dense = deepseek_text("", "expert_parallel: 8");
  dense.replace(dense.find("first_dense_layers: 1"), 21, "first_dense_layers: 4");
  EXPECT_TRUE(names(dense, "model.first_dense_layers"));
  EXPECT_TRUE(names(deepseek_text("moe_routing_skew: -1", "expert_parallel: 8"), "model.moe_routing_skew"));
  std::string v = deepseek_text("", "expert_parallel: 8");
  v.replace(v.find("v_head_dim: 32"), 14, "v_head_dim: 0");
  EXPECT_TRUE(names(v, "model.v_head_dim"));
  EXPECT_TRUE(
      names(deepseek_text("", "hierarchical_all_to_all: true"), "parallelism.hierarchical_all_to_all"));
}

TEST(JobSpec, ComputeModelFieldsSetTheEfficiencies) {
  const auto text = dense_spec_text("tensor_parallel: 2", "global_batch_sequences: 4");
  const Job plain(spec::to_job_params(spec::parse_job_spec_text(text)));
  // Unset fields take the GPU profile's measured values (docs/gpu-profiles.md).
  const KernelEfficiency& k = plain.gpu().kernels;
  EXPECT_DOUBLE_EQ(plain.compute().params().compute_eff_max, k.gemm(DType::kBf16));
  EXPECT_DOUBLE_EQ(plain.compute().params().memory_eff_max, k.memory);
  EXPECT_DOUBLE_EQ(plain.compute().params().op_overhead_s, k.kernel_gap_s);
  EXPECT_TRUE(std::isnan(plain.compute().overrides().compute_eff_max));
  const Job tuned(spec::to_job_params(spec::parse_job_spec_text(
      text + "compute_model { compute_eff_max: 0.6 memory_eff_max: 0.7 op_overhead_us: 10 }")));
  EXPECT_DOUBLE_EQ(tuned.compute().params().compute_eff_max, 0.6);
  EXPECT_DOUBLE_EQ(tuned.compute().params().memory_eff_max, 0.7);
  EXPECT_DOUBLE_EQ(tuned.compute().params().op_overhead_s, 10e-6);
  const Job no_overhead(
      spec::to_job_params(spec::parse_job_spec_text(text + "compute_model { no_op_overhead: true }")));
  EXPECT_EQ(no_overhead.compute().params().op_overhead_s, 0.0);
  // A lower GEMM efficiency makes a large GEMM proportionally slower.
  const ComputeWork gemm{"qkv_fwd", 1e13, 1e9, DType::kBf16};
  EXPECT_NEAR(tuned.compute().seconds(gemm) - 10e-6,
              (plain.compute().seconds(gemm) - k.kernel_gap_s) * k.gemm(DType::kBf16) / 0.6, 1e-12);

  EXPECT_NE(error_of(text + "compute_model { compute_eff_max: 1.5 }").find("compute_model.compute_eff_max"),
            std::string::npos);
  EXPECT_NE(error_of(text + "compute_model { memory_eff_max: -1 }").find("compute_model.memory_eff_max"),
            std::string::npos);
  EXPECT_NE(error_of(text + "compute_model { op_overhead_us: -2 }").find("compute_model.op_overhead_us"),
            std::string::npos);

  // compute_model.scale (sensitivity studies) multiplies the values in force; unset = 1.
  EXPECT_EQ(plain.compute().params().scale.gemm_eff, 1.0);
  const Job scaled(spec::to_job_params(spec::parse_job_spec_text(
      text + "compute_model { scale { gemm_eff: 1.1 hbm_eff: 0.9 kernel_gap: 2 } }")));
  EXPECT_DOUBLE_EQ(scaled.compute().params().compute_eff_max, 1.1 * k.gemm(DType::kBf16));
  EXPECT_DOUBLE_EQ(scaled.compute().params().memory_eff_max, 0.9 * k.memory);
  EXPECT_DOUBLE_EQ(scaled.compute().params().op_overhead_s, 2 * k.kernel_gap_s);
  EXPECT_EQ(scaled.compute().params().scale.sustained_clock, 1.0);
  EXPECT_NE(error_of(text + "compute_model { scale { hbm_eff: -1 } }").find("compute_model.scale.hbm_eff"),
            std::string::npos);
  EXPECT_NE(error_of(text + "compute_model { scale { gemm_eff: 2 } }").find("compute_model.scale"),
            std::string::npos);
}

// Issue #25: moe_top_k 0 (or unset) on a mixture of experts was silently top-1, and a 4294967295-entry
// vocabulary passed. Each is now one error naming the field.
TEST(JobSpec, MoeTopKMustBeWithinTheExperts) {
  const std::string train = "global_batch_sequences: 16";
  std::string moe = testing::moe_spec_text("", train);
  EXPECT_EQ(error_of(moe), "");
  auto with_top_k = [&](const std::string& value) {
    std::string text = moe;
    text.replace(text.find("moe_top_k: 2"), 12, value);
    return error_of(text);
  };
  for (const std::string value : {"moe_top_k: 0", "", "moe_top_k: 9"}) {
    const std::string e = with_top_k(value);
    EXPECT_NE(e.find("model.moe_top_k: must be within [1, model.num_experts=8]"), std::string::npos)
        << value << ": " << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
  EXPECT_EQ(with_top_k("moe_top_k: 8"), "");
  EXPECT_EQ(with_top_k("moe_top_k: 1"), "");
}

TEST(JobSpec, SizesHaveUpperBoundsThatNameTheField) {
  const std::string train = "global_batch_sequences: 16";
  const std::string dense = dense_spec_text("", train);
  struct Case {
    std::string from, to, field;
  };
  const Case cases[] = {
      {"vocab_size: 32000", "vocab_size: 4294967295", "model.vocab_size: at most 16777216"},
      {"num_layers: 8", "num_layers: 4294967295", "model.num_layers: at most"},
      {"hidden_size: 2048", "hidden_size: 4294967295", "model.hidden_size: at most"},
      {"ffn_hidden_size: 8192", "ffn_hidden_size: 4294967295", "model.ffn_hidden_size: at most"},
      {"num_attention_heads: 16", "num_attention_heads: 65536", "model.num_attention_heads: at most"},
      {"seq_length_tokens: 1024", "seq_length_tokens: 4294967295", "model.seq_length_tokens: at most"},
      {"global_batch_sequences: 16", "global_batch_sequences: 18446744073709551615",
       "training.global_batch_sequences: at most"},
      {"global_batch_sequences: 16", "global_batch_sequences: 16 micro_batch_sequences: 4294967295",
       "training.micro_batch_sequences: at most"},
      {"global_batch_sequences: 16", "global_batch_sequences: 8192 micro_batch_sequences: 8192",
       "training.micro_batch_sequences x model.seq_length_tokens: at most"},
      {"global_batch_sequences: 16", "global_batch_sequences: 16 grad_bucket_bytes: 18446744073709551615",
       "training.grad_bucket_bytes: at most"},
      {"parallelism {  }", "parallelism { data_parallel: 4294967295 }", "parallelism.data_parallel: at most"},
      {"parallelism {  }", "parallelism { tensor_parallel: 65536 pipeline_parallel: 65536 }",
       "world_size_gpus (TP x PP x DP x CP): at most"},
  };
  for (const Case& c : cases) {
    std::string text = dense;
    ASSERT_NE(text.find(c.from), std::string::npos) << c.from;
    text.replace(text.find(c.from), c.from.size(), c.to);
    const std::string e = error_of(text);
    EXPECT_NE(e.find(c.field), std::string::npos) << c.to << ": " << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
  // The bounds themselves are accepted where the rest of the spec allows them (a 16M-token vocabulary's
  // embedding does not fit one GPU's HBM, which is a different check).
  std::string big = dense;
  big.replace(big.find("vocab_size: 32000"), 17, "vocab_size: 16777216");
  big.replace(big.find("global_batch_sequences: 16"), 26,
              "global_batch_sequences: 16 allow_hbm_overflow: true");
  EXPECT_EQ(error_of(big), "");
}

// JSON or text format by the content (experiment/spec/spec_text.hpp), not the name: JSON in a .txtpb file,
// text format in a .json file, each after a UTF-8 byte-order mark.
TEST(JobSpec, LoadPicksTheFormatFromTheContent) {
  const auto dir = std::filesystem::temp_directory_path();
  const auto json = dir / "warpsim_job_spec_test.txtpb";
  const auto text = dir / "warpsim_job_spec_test.json";
  {
    std::ofstream(json)
        << "\xEF\xBB\xBF  "
        << R"({"gpuType": "H200", "model": {"numLayers": 2, "hiddenSize": 64, "ffnHiddenSize": 256,
        "numAttentionHeads": 4, "seqLengthTokens": 32, "vocabSize": 100}, "training": {"globalBatchSequences": 4}})";
    std::ofstream(text) << "\xEF\xBB\xBF"
                           "gpu_type: \"H200\" model { num_layers: 2 hidden_size: 64 ffn_hidden_size: 256 "
                           "num_attention_heads: 4 seq_length_tokens: 32 vocab_size: 100 } "
                           "training { global_batch_sequences: 4 }";
  }
  const spec::JobSpec a = spec::load_job_spec(json.string());
  const spec::JobSpec b = spec::load_job_spec(text.string());
  EXPECT_EQ(a.SerializeAsString(), b.SerializeAsString());
  EXPECT_EQ(a.parallelism().tensor_parallel(), 1u);  // normalized defaults
  EXPECT_EQ(a.model().dtype(), spec::JobModel::BF16);
  std::filesystem::remove(json);
  std::filesystem::remove(text);
  EXPECT_THROW(spec::load_job_spec((dir / "no_such_spec.json").string()), std::invalid_argument);
}

}  // namespace
}  // namespace warpsim::workload
