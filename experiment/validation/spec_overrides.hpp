// Parameter overrides for `warpsim validate --set PATH=VALUE` / `--scale PATH=FACTOR`: a field of the
// experiment spec named by its dotted path (e.g. job.compute_model.compute_eff_max,
// cluster.fat_tree.links.bandwidth_gbps; a repeated message or number applies to every element), set to a
// value or multiplied by a factor. The sensitivity runs of docs/validation.md use them; the shipped rows are
// never edited.
#pragma once

#include <string>
#include <vector>

#include "experiment/spec/experiment.pb.h"

namespace warpsim::experiment::validation {

struct Override {
  enum class Kind { kSet, kScale } kind = Kind::kSet;
  std::string path;
  std::string value;  // the text after '='
  std::string flag;   // "--set" or "--scale", for errors
};

// Parses "PATH=VALUE"; throws std::invalid_argument naming the flag.
Override parse_override(const std::string& text, Override::Kind kind);

// Applies each override in order and re-validates the spec. Throws std::invalid_argument naming the flag
// and the path (unknown field, a value that does not parse, --scale of a field at 0, i.e. at its default).
spec::ExperimentSpec apply_overrides(spec::ExperimentSpec exp, const std::vector<Override>& overrides);

}  // namespace warpsim::experiment::validation
