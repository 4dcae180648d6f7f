// Job specs shared by the workload tests (see test_jobs.hpp).
#include "tests/models/workload/test_jobs.hpp"

#include "experiment/spec/job_spec.hpp"

namespace warpsim::workload::testing {

std::string dense_spec_text(const std::string& parallel, const std::string& training, std::uint64_t world) {
  return "name: \"gpt-small\"\n"
         "gpu_type: \"H100-SXM\"\n" +
         (world ? "world_size_gpus: " + std::to_string(world) + "\n" : std::string()) +
         "model { num_layers: 8 hidden_size: 2048 ffn_hidden_size: 8192 num_attention_heads: 16\n"
         "        seq_length_tokens: 1024 vocab_size: 32000 dtype: BF16 linear_bias: true }\n"
         "parallelism { " +
         parallel +
         " }\n"
         "training { " +
         training + " }\n";
}

std::string moe_spec_text(const std::string& parallel, const std::string& training) {
  return "gpu_type: \"H100-SXM\"\n"
         "model { num_layers: 4 hidden_size: 1024 ffn_hidden_size: 2048 num_attention_heads: 8 num_kv_heads: "
         "4\n"
         "        seq_length_tokens: 512 vocab_size: 8192 num_experts: 8 moe_top_k: 2 gated_mlp: true\n"
         "        norm: RMS_NORM untied_embeddings: true fused_attention: true }\n"
         "parallelism { " +
         parallel +
         " }\n"
         "training { " +
         training + " }\n";
}

std::shared_ptr<const Job> make_job(const std::string& text) {
  return std::make_shared<const Job>(spec::to_job_params(spec::parse_job_spec_text(text)));
}

}  // namespace warpsim::workload::testing
