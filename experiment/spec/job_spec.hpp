// Loading and validating JobSpec (experiment/spec/job.proto): text format or JSON in, a normalized and
// checked message out, and its conversion to the workload model's plain parameters. Errors are
// std::invalid_argument whose message names the offending field.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "experiment/spec/job.pb.h"
#include "models/workload/job_params.hpp"

namespace warpsim::spec {

// Parses protobuf text format; errors carry "source:line:column".
JobSpec parse_job_spec_text(std::string_view text, std::string_view source = "<job spec>");
// Parses JSON (proto3 JSON mapping, field names in lowerCamelCase or as written in the .proto).
JobSpec parse_job_spec_json(std::string_view text, std::string_view source = "<job spec>");
// Reads a file: JSON or text format by the content (spec_text.hpp's rule, a UTF-8 BOM is dropped). Result is
// normalized + validated.
JobSpec load_job_spec(const std::string& path);

// Upper bounds validate_job_spec() enforces, far above any shipped example (the largest: 128 layers, hidden
// 25600, FFN 102400, 160 heads, 8192 tokens, vocabulary 128256, 100k GPUs). They keep the model's
// arithmetic in range: degrees multiply into the world size in 64 bits, and tokens x width x bytes per
// element (activations, logits, a micro-batch's attention scores: 2^22 tokens x 2^22 keys x 2^12 heads x 4
// bytes = 2^58) stay below 2^64.
inline constexpr std::uint64_t kMaxLayers = 4096;
inline constexpr std::uint64_t kMaxHiddenSize = 1u << 18;       // 262144
inline constexpr std::uint64_t kMaxFfnHiddenSize = 1u << 20;    // 1048576
inline constexpr std::uint64_t kMaxAttentionHeads = 1u << 12;   // 4096 (also num_kv_heads)
inline constexpr std::uint64_t kMaxSeqLengthTokens = 1u << 22;  // 4M tokens
inline constexpr std::uint64_t kMaxVocabSize = 1u << 24;        // 16M entries
inline constexpr std::uint64_t kMaxExperts = 1u << 14;          // 16384
inline constexpr std::uint64_t kMaxWorldSize = 1u << 24;        // each parallel degree and TP x PP x DP x CP
inline constexpr std::uint64_t kMaxMicroBatchSequences = 1u << 16;
inline constexpr std::uint64_t kMaxMicroBatchTokens = 1u << 22;  // micro_batch_sequences x seq_length_tokens
inline constexpr std::uint64_t kMaxGlobalBatchSequences = 1u << 24;
inline constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << 50;  // 1 PiB: bucket, checkpoint, tree chunk

// Replaces "0 = default" fields by their defaults (degrees 1, micro-batch 1, BF16, ...).
JobSpec normalized(JobSpec spec);
// Structural checks of a normalized spec (divisibility, world size, batch split). The GPU type name is
// checked against the profiles by the workload model (models/workload/job.hpp), which owns them.
void validate_job_spec(const JobSpec& spec);

// Parallel sizes derived from a normalized spec.
std::uint64_t world_size(const JobSpec& spec);
std::uint64_t microbatches_per_step(const JobSpec& spec);  // per pipeline, per data-parallel replica

// Normalizes and validates `spec` as above, then converts it: "0 = default" fields become explicit values,
// enums the workload model's. The GPU type and the compute-model ranges are checked by workload::Job.
workload::JobParams to_job_params(const JobSpec& spec);

}  // namespace warpsim::spec
