// Validation of CostSpec (experiment/spec/cost.proto). Errors are std::invalid_argument naming the field,
// e.g. "cost.pue: must be >= 1 (got 0.9)".
#pragma once

#include <string_view>

#include "experiment/spec/cost.pb.h"

namespace warpsim::spec {

// Throws on a missing required field or an out-of-range value; `prefix` starts every field name ("cost").
void validate_cost_spec(const CostSpec& cost, std::string_view prefix = "cost");
// Parses text format or JSON (see spec_text.hpp) and validates.
CostSpec parse_cost_spec(std::string_view text, std::string_view origin);

}  // namespace warpsim::spec
