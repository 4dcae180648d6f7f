// Evaluating one validation row: the row's experiment simulated in full (experiment::run_training, the code
// path of `warpsim run`, sequential sync in this process), or through the reduction its spec selects
// (validation.reduction: a data-parallel replica plus the data-parallel term, and/or a two-point
// micro-batch extrapolation), then TFLOP/s per GPU against the published figure.
#pragma once

#include <functional>
#include <string>

#include "experiment/spec/experiment.pb.h"
#include "experiment/validation/row_result.hpp"

namespace warpsim::experiment::validation {

struct RowOptions {
  bool full = false;  // ignore the spec's reduction and simulate the whole job
  // Called before each simulation with what it is (e.g. "dp replica, 8 micro-batches").
  std::function<void(const std::string&)> on_simulation;
};

// `row` is a loaded, checked row (spec::load_validation_row) whose file is `path`. Collective over nothing:
// every simulation runs on MPI_COMM_SELF. Throws what run_training throws.
RowResult evaluate_row(const spec::ExperimentSpec& row, const std::string& path,
                       const RowOptions& options = {});

// "3072 A100-80GB, TP8 PP64 DP6 (interleaved x2), MBS1 GBS3072, seq 2048": the row's shape for tables.
std::string describe_config(const spec::ExperimentSpec& row);

}  // namespace warpsim::experiment::validation
