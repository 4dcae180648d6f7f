// Loading a validation set's row: an experiment spec (experiment.proto) whose `validation` message names the
// published figure, its source and metric (validation.proto). Errors are std::invalid_argument naming the
// field, e.g. "experiment spec: validation.reference: required ...".
#pragma once

#include <string>

#include "experiment/spec/experiment.pb.h"

namespace warpsim::spec {

// The metric names `validation.metric` accepts.
inline constexpr const char* kTflopsPerGpuMetric = "tflops_per_gpu";

// Checks the validation message of an already loaded experiment.
void validate_validation_spec(const ExperimentSpec& exp);

// load_experiment_spec(path) plus the validation message's checks.
ExperimentSpec load_validation_row(const std::string& path);

}  // namespace warpsim::spec
