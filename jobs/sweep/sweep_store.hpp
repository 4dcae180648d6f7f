// The on-disk layout of a sweep's output folder and everything that reads or writes it, so the local runner,
// Slurm array tasks and the service all agree:
//   DIR/manifest.tsv             index, id, name, overrides of every experiment (written when prepared)
//   DIR/experiments/<id>.textproto  the experiment's full spec (what `warpsim run` gets)
//   DIR/results/<id>.txt         the run's `key: value` summary + `spec digest:`; exists only if it succeeded
//   DIR/results/<id>.h5          the run's HDF5 results file (`warpsim run --output`: meta, summary, series)
//   DIR/results/<id>.failed      exit status and stderr tail of a failed run (removed when it succeeds)
//   DIR/logs/<id>.log            the run's stderr
//   DIR/index.csv, DIR/index.h5  the results index: one row per experiment, rebuilt from the files above
// Every file is written to a temporary name and renamed, so a reader or a killed writer never sees half a
// file; the index is rebuilt under an flock so concurrent Slurm tasks do not interleave.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "experiment/spec/sweep_spec.hpp"

namespace warpsim::sweep {

struct ManifestEntry {
  std::size_t index = 0;
  std::string id;
  std::string name;
  std::string overrides;
};

struct IndexRow {
  ManifestEntry entry;
  std::string status;                         // done | failed | running | pending
  std::map<std::string, std::string> values;  // the run summary's `key: value` lines (done rows)
};

// Numeric metric columns of the index, as `warpsim run` names them (spaces become '_' in column names).
const std::vector<std::string>& index_metric_keys();

class SweepStore {
 public:
  explicit SweepStore(std::string dir);

  const std::string& dir() const { return dir_; }
  std::string experiment_path(const std::string& id) const;
  std::string result_path(const std::string& id) const;
  std::string failed_path(const std::string& id) const;
  std::string h5_path(const std::string& id) const;  // the run's HDF5 results file
  std::string log_path(const std::string& id) const;
  std::string partial_path(const std::string& id) const;  // the running child's stdout
  std::string index_csv() const { return dir_ + "/index.csv"; }
  std::string index_h5() const { return dir_ + "/index.h5"; }
  std::string manifest_path() const { return dir_ + "/manifest.tsv"; }

  // Creates the folders and writes the manifest and every experiment file whose text changed (unchanged
  // files keep their mtime). Returns the manifest.
  std::vector<ManifestEntry> prepare(const spec::Sweep& sweep) const;
  // Reads DIR/manifest.tsv; throws std::invalid_argument if it is missing or malformed.
  std::vector<ManifestEntry> read_manifest() const;

  // The experiment's spec digest (of its file's text): a result counts only if it was made from this text.
  std::string spec_digest(const std::string& id) const;
  // A result exists and was made from the current experiment file.
  bool is_done(const std::string& id) const;
  // Stores a finished run: summary + digest to results/<id>.txt on success, results/<id>.failed otherwise.
  void record(const std::string& id, int exit_code, const std::string& summary,
              const std::string& stderr_tail) const;

  std::vector<IndexRow> rows(const std::vector<ManifestEntry>& manifest,
                             const std::vector<std::string>& running = {}) const;
  // Rebuilds index.csv and index.h5 from the result files (under DIR/.index.lock).
  void write_index(const std::vector<ManifestEntry>& manifest,
                   const std::vector<std::string>& running = {}) const;

 private:
  std::string dir_;
};

// Writes `content` to `path` through a temporary file in the same folder and a rename.
void write_file_atomically(const std::string& path, const std::string& content);
std::string read_text_file(const std::string& path);
// `key: value` lines into a map (other lines ignored).
std::map<std::string, std::string> parse_summary(const std::string& text);
// RFC 4180 quoting when needed.
std::string csv_field(const std::string& s);

}  // namespace warpsim::sweep
