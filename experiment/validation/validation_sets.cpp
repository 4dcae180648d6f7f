// Finding validation sets and their rows (see validation_sets.hpp).
#include "experiment/validation/validation_sets.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

namespace warpsim::experiment::validation {

namespace fs = std::filesystem;

namespace {

bool is_spec(const fs::path& p) {
  return p.extension() == ".textproto" || p.extension() == ".json";
}

std::vector<fs::path> specs_in(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file() && is_spec(e.path())) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool matches(const std::vector<std::string>& globs, const std::string& id, const std::string& stem) {
  if (globs.empty()) return true;
  for (const auto& g : globs) {
    if (fnmatch(g.c_str(), id.c_str(), 0) == 0 || fnmatch(g.c_str(), stem.c_str(), 0) == 0) return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> shipped_sets(const std::string& root) {
  std::vector<std::string> sets;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return sets;
  for (const auto& e : fs::directory_iterator(root)) {
    if (e.is_directory() && !specs_in(e.path()).empty()) sets.push_back(e.path().string());
  }
  std::sort(sets.begin(), sets.end());
  return sets;
}

std::vector<RowFile> list_rows(const std::vector<std::string>& sets, const std::vector<std::string>& globs) {
  std::vector<RowFile> rows;
  for (const auto& s : sets) {
    const fs::path p(s);
    std::error_code ec;
    std::vector<fs::path> files;
    if (fs::is_directory(p, ec)) {
      files = specs_in(p);
      if (files.empty()) throw std::invalid_argument("SET: '" + s + "' holds no experiment specs");
    } else if (fs::is_regular_file(p, ec)) {
      files.push_back(p);
    } else {
      throw std::invalid_argument("SET: '" + s + "' does not exist");
    }
    for (const auto& f : files) {
      const fs::path canonical = fs::weakly_canonical(f);
      const std::string set = canonical.parent_path().filename().string();
      const std::string id = set + "/" + f.stem().string();
      if (matches(globs, id, f.stem().string())) rows.push_back({set, f.string(), id});
    }
  }
  return rows;
}

}  // namespace warpsim::experiment::validation
