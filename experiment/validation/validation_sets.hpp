// Validation sets on disk: a set is a folder of experiment specs (*.textproto, *.json), each a row with a
// `validation {}` message; the shipped sets are the folders under validation/. Rows run in file-name order.
#pragma once

#include <string>
#include <vector>

namespace warpsim::experiment::validation {

struct RowFile {
  std::string set;   // the folder's name
  std::string path;  // the spec file
  std::string id;    // "set/stem": what --rows matches and what the tables print
};

// The sets under `root` (its sub-folders that hold at least one spec), sorted.
std::vector<std::string> shipped_sets(const std::string& root);

// The rows of the given set folders (or single spec files), filtered by shell globs matched against the
// id ("megatron-sc21/03-*") or the stem; no globs = every row. Throws std::invalid_argument naming a path
// that does not exist or a folder without specs.
std::vector<RowFile> list_rows(const std::vector<std::string>& sets, const std::vector<std::string>& globs);

}  // namespace warpsim::experiment::validation
