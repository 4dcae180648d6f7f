// Self-contained spec text for submissions (see submit_spec.hpp).
#include "jobs/serve/submit_spec.hpp"

#include <google/protobuf/text_format.h>

#include <filesystem>
#include <stdexcept>

#include "experiment/spec/cluster_spec.hpp"
#include "experiment/spec/experiment_spec.hpp"
#include "experiment/spec/job_spec.hpp"
#include "experiment/spec/sweep_spec.hpp"
#include "jobs/sweep/sweep_store.hpp"

namespace warpsim::serve {

namespace fs = std::filesystem;

namespace {

std::string read(const std::string& path, const std::string& field) {
  try {
    return sweep::read_text_file(path);
  } catch (const std::exception&) {
    throw std::invalid_argument(field + ": cannot read '" + path + "'");
  }
}

std::string resolve(const fs::path& folder, const std::string& file) {
  const fs::path p(file);
  return p.is_absolute() ? file : (folder / p).lexically_normal().string();
}

// Inlines cluster_file and job_file, relative to `folder`; `field` prefixes errors. True if it changed.
bool inline_files(spec::ExperimentSpec& e, const fs::path& folder, const std::string& field) {
  bool changed = false;
  if (e.cluster_source_case() == spec::ExperimentSpec::kClusterFile) {
    const std::string file = resolve(folder, e.cluster_file());
    (void)read(file, field + "cluster_file");  // "cannot read '<file>'" named by this field
    try {
      *e.mutable_cluster() = spec::load_cluster_spec(file);
    } catch (const std::invalid_argument& ex) {
      throw std::invalid_argument(field + "cluster_file: " + ex.what());
    }
    changed = true;
  }
  if (e.job_source_case() == spec::ExperimentSpec::kJobFile) {
    const std::string file = resolve(folder, e.job_file());
    (void)read(file, field + "job_file");
    try {
      *e.mutable_job() = spec::load_job_spec(file);
    } catch (const std::invalid_argument& ex) {
      throw std::invalid_argument(field + "job_file: " + ex.what());
    }
    changed = true;
  }
  return changed;
}

std::string to_text(const google::protobuf::Message& m) {
  std::string out;
  if (!google::protobuf::TextFormat::PrintToString(m, &out))
    throw std::runtime_error("cannot print the resolved spec");
  return out;
}

}  // namespace

std::string self_contained_experiment_text(const std::string& path) {
  const std::string text = read(path, "spec file");
  auto e = spec::parse_experiment_spec(text, path);
  if (!inline_files(e, fs::path(path).parent_path(), "")) return text;
  return to_text(e);
}

std::string self_contained_sweep_text(const std::string& path) {
  const std::string text = read(path, "spec file");
  auto s = spec::parse_sweep_spec(text, path);
  bool changed = false;
  if (s.base_source_case() == spec::SweepSpec::kBaseFile) {
    const std::string file = resolve(fs::path(path).parent_path(), s.base_file());
    const std::string base_text = read(file, "base_file");
    spec::ExperimentSpec base;
    try {
      base = spec::parse_experiment_spec(base_text, file);
    } catch (const std::invalid_argument& ex) {
      throw std::invalid_argument(std::string("base_file: ") + ex.what());
    }
    inline_files(base, fs::path(file).parent_path(), "base_file: ");
    *s.mutable_base() = std::move(base);  // replaces base_file (one oneof)
    changed = true;
  } else if (s.base_source_case() == spec::SweepSpec::kBase) {
    changed = inline_files(*s.mutable_base(), fs::path(path).parent_path(), "base.");
  }
  return changed ? to_text(s) : text;
}

}  // namespace warpsim::serve
