// Validation of ReliabilitySpec (experiment/spec/reliability.proto). Errors are std::invalid_argument naming the
// field, e.g. "reliability.failures[1].mtbf_hours: must be > 0 (got 0)".
#pragma once

#include <string_view>

#include "experiment/spec/reliability.pb.h"

namespace warpsim::spec {

// Component names a FailureRate may name.
bool is_failure_component(std::string_view name);
void validate_reliability_spec(const ReliabilitySpec& r, std::string_view prefix = "reliability");

}  // namespace warpsim::spec
