// Validation-row loading and checks (see validation_spec.hpp).
#include "experiment/spec/validation_spec.hpp"

#include <cmath>
#include <stdexcept>

#include "experiment/spec/experiment_spec.hpp"
#include "experiment/spec/job_spec.hpp"

namespace warpsim::spec {

namespace {

[[noreturn]] void fail(const std::string& field, const std::string& message) {
  throw std::invalid_argument("experiment spec: validation" + (field.empty() ? "" : "." + field) + ": " +
                              message);
}

}  // namespace

void validate_validation_spec(const ExperimentSpec& exp) {
  if (!exp.has_validation()) {
    fail("", "required in a validation set's row (metric, reference, source)");
  }
  const ValidationSpec& v = exp.validation();
  if (v.metric().empty()) fail("metric", std::string("required (") + kTflopsPerGpuMetric + ")");
  if (v.metric() != kTflopsPerGpuMetric) {
    fail("metric", "unknown metric '" + v.metric() + "' (known: " + kTflopsPerGpuMetric + ")");
  }
  if (v.reference() == 0) fail("reference", "required: the published figure (> 0)");
  if (!(v.reference() > 0) || !std::isfinite(v.reference())) {
    fail("reference", "must be a finite figure > 0 (got " + std::to_string(v.reference()) + ")");
  }
  if (v.source().empty()) fail("source", "required: where the reference was published (paper, table, row)");
  if (!v.flop_count().empty() && v.flop_count() != "hardware" && v.flop_count() != "model" &&
      v.flop_count() != "model_unmasked_attention") {
    fail("flop_count", "must be hardware, model or model_unmasked_attention (got '" + v.flop_count() + "')");
  }
  const ValidationReduction& r = v.reduction();
  const JobSpec& job = exp.job();
  if (r.dp_replica() && job.parallelism().data_parallel() <= 1) {
    fail("reduction.dp_replica",
         "needs data_parallel > 1 (got " + std::to_string(job.parallelism().data_parallel()) + ")");
  }
  if (r.microbatch_points_size() != 0) {
    if (r.microbatch_points_size() != 2) {
      fail("reduction.microbatch_points",
           "needs exactly two micro-batch counts (got " + std::to_string(r.microbatch_points_size()) + ")");
    }
    const std::uint64_t m = microbatches_per_step(job);
    const std::uint32_t lo = r.microbatch_points(0), hi = r.microbatch_points(1);
    if (lo == 0 || lo >= hi || hi >= m) {
      fail("reduction.microbatch_points", "must be 0 < first < second < the job's " + std::to_string(m) +
                                              " micro-batches per pipeline (got " + std::to_string(lo) +
                                              ", " + std::to_string(hi) + ")");
    }
  }
}

ExperimentSpec load_validation_row(const std::string& path) {
  ExperimentSpec exp = load_experiment_spec(path);
  validate_validation_spec(exp);
  return exp;
}

}  // namespace warpsim::spec
