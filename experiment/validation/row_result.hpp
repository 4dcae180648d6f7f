// One validation row's outcome (`warpsim validate`): the published figure, warpsim's prediction, the signed
// relative error, how the prediction was reached (reduction) and what it cost. A worker process prints it as
// `key: value` lines and the parent reads it back (to_report / parse_row_result).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "io/key_value_report.hpp"

namespace warpsim::experiment::validation {

struct RowResult {
  std::string set;          // the set's folder name
  std::string row;          // the row's file name without extension
  std::string name;         // the experiment's name
  std::string config;       // GPUs and parallel degrees, e.g. "3072 A100-80GB, TP8 PP64 DP6, MBS1 GBS3072"
  std::string source;       // validation.source
  double reference = 0;     // published TFLOP/s per GPU
  double prediction = 0;    // warpsim's TFLOP/s per GPU
  double step_seconds = 0;  // warpsim's step
  std::string reduction;    // "none" or how the step was assembled, with its numbers
  std::uint32_t simulations = 0;
  std::uint64_t events = 0;  // committed events of all the row's simulations
  double wall_seconds = 0;   // of all the row's simulations
  std::string error_text;    // non-empty: the row failed (no prediction)

  bool failed() const { return !error_text.empty(); }
  // (prediction - reference) / reference
  double error() const { return (prediction - reference) / reference; }
};

io::KeyValueReport to_report(const RowResult& r);
// Reads to_report's lines back; throws std::runtime_error naming a missing key.
RowResult parse_row_result(std::string_view text);

}  // namespace warpsim::experiment::validation
