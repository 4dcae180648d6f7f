// What `warpsim validate` prints and writes from its rows' results: the per-row lines, each set's mean
// absolute error and worst row, the CSV, and the Markdown tables that docs/validation.md carries between
// `<!-- validate:begin SET -->` and `<!-- validate:end SET -->` (rewritten by `warpsim validate --docs`).
#pragma once

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "experiment/validation/row_result.hpp"

namespace warpsim::experiment::validation {

struct Summary {
  std::size_t rows = 0;    // rows with a prediction
  std::size_t failed = 0;  // rows whose simulation failed
  double mean_abs_error = 0;
  std::optional<std::size_t> worst;  // index into the rows given, largest |error|
  std::size_t within_10 = 0;         // rows with |error| <= 10%
  double wall_seconds = 0;           // sum over the rows' simulations
};

Summary summarize(const std::vector<RowResult>& rows);

// "+13.4%"
std::string percent(double fraction);

// One line per row, then the summary, for the terminal.
void print_rows(std::ostream& out, const std::vector<RowResult>& rows);
void print_summary(std::ostream& out, const std::string& label, const Summary& s,
                   const std::vector<RowResult>& rows);

// Header + one line per row (RFC 4180 quoting).
std::string to_csv(const std::vector<RowResult>& rows);

// The Markdown block of one set: the command, the table, MAE and worst row.
std::string to_markdown(const std::vector<RowResult>& rows, const std::string& command);

// `doc` with the text between `<!-- validate:begin SET -->` and `<!-- validate:end SET -->` replaced by
// `block`; throws std::invalid_argument when the markers are missing.
std::string rewrite_block(const std::string& doc, const std::string& set, const std::string& block);

// Writes next to `path` and renames; refuses an existing file unless `overwrite` (the error names `flag`).
void write_file_atomically(const std::string& path, const std::string& content, bool overwrite,
                           const std::string& flag);

}  // namespace warpsim::experiment::validation
