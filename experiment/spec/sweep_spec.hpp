// Loading and expanding SweepSpec (experiment/spec/sweep.proto): the base experiment is resolved, every axis
// path is looked up by protobuf reflection in ExperimentSpec and every value parsed with the field's type,
// then the product of the axes (zipped groups advancing together) becomes a list of validated
// experiments. Errors are std::invalid_argument naming the axis path (and the experiment for combinations
// that do not validate), so the CLI exits with code 2.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "experiment/spec/experiment.pb.h"
#include "experiment/spec/sweep.pb.h"

namespace warpsim::spec {

// One field set by a sweep: its path and its value in canonical text (numbers re-printed, so "08" and "8"
// are the same override).
struct SweepOverride {
  std::string path;
  std::string value;
};

struct SweepExperiment {
  std::size_t index = 0;  // position in the expansion (first axis slowest)
  // Stable id: 12 hex digits of a hash of the overrides (paths and canonical values). It does not depend
  // on the experiment's position, so adding a value to an axis keeps the other experiments' ids.
  std::string id;
  std::string name;  // <sweep name>-<index>; also the experiment's `name`
  std::vector<SweepOverride> overrides;
  ExperimentSpec spec;                 // resolved (inline cluster and job), overridden and validated
  std::string overrides_text() const;  // "path=value; path=value"
};

struct Sweep {
  std::string name;
  std::vector<SweepExperiment> experiments;
};

// Text format, or JSON when the first non-blank character is '{'. No resolution or validation.
SweepSpec parse_sweep_spec(std::string_view text, std::string_view origin);

// Reads the sweep file, resolves its base (relative paths from the sweep file's folder) and expands it.
Sweep load_sweep(const std::string& path);

// Expands a parsed sweep whose base is `base` (cluster and job inline, not yet validated).
Sweep expand_sweep(const SweepSpec& sweep, const ExperimentSpec& base);

// Sets the field at `path` of `spec` from its text; returns the canonical value text. Throws
// std::invalid_argument "<path>: ..." for an unknown field, a bad index, a message/repeated field without a
// scalar at the end, or a value that does not parse as the field's type.
std::string apply_override(ExperimentSpec& spec, const std::string& path, const std::string& value);

// At most this many experiments in one sweep (a typo in an axis should not create millions of files).
inline constexpr std::size_t kMaxSweepExperiments = 100000;

}  // namespace warpsim::spec
