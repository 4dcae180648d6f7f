// Loading and validating JobSpec (experiment/spec/job.proto): text format or JSON in, a normalized and checked
// message out, and its conversion to the workload model's plain parameters. Errors are
// std::invalid_argument whose message names the offending field.
#pragma once

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
