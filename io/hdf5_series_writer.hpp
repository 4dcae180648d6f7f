// Writes a finished SeriesRecorder, run metadata and a summary into one HDF5 file, from all ranks at once
// (parallel HDF5 over MPI-IO, collective writes; one rank: the POSIX driver, chunks deflated by worker
// threads). Layout: docs/hdf5-layout.md. The file is written under
// "<path>.partial" and renamed by rank 0 after every rank has closed it, so a run that dies leaves no file
// under the final name.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/series_recorder.hpp"

namespace warpsim::io {

// /meta attributes: what describes the run but may legitimately differ between equivalent runs (rank count,
// sync mode, wall time). Every rank must pass identical values.
// /summary scalars: the run's key results. Only values that are identical whatever the rank count, sync
// mode and partition belong here (files of equivalent runs compare equal on /series, /components, /summary).
struct SummaryValue {
  std::string name;
  double value = 0;
  std::string unit;
};

struct RunMetadata {
  std::vector<std::pair<std::string, std::string>> text;
  std::vector<std::pair<std::string, std::int64_t>> integers;
  std::vector<std::pair<std::string, double>> reals;
  // More groups of result scalars like /summary's, each at its path from the root ("jobs/<name>": a shared
  // cluster's per-job results); parent groups are made as needed. Rank-count independent, like /summary.
  std::vector<std::pair<std::string, std::vector<SummaryValue>>> result_groups;
};

// Where the series go when several ranks write: one file written collectively through MPI-IO, or one file
// per rank (the one-rank writer's fast path, no MPI-IO) joined by virtual datasets in the result file
// (docs/hdf5-layout.md measures both). Readers see the same datasets either way.
enum class SeriesLayout { kSingleFile, kPerRank };

struct SeriesFileOptions {
  // Deflate level 0-9 for the series datasets (0 = none). Parallel HDF5 >= 1.10.2 writes filtered datasets
  // collectively; the choice and its measured cost are in docs/hdf5-layout.md.
  int deflate_level = 2;
  // Ignored on one rank (always one file).
  SeriesLayout layout = SeriesLayout::kSingleFile;
};

// Collective. Throws std::invalid_argument on every rank (message naming `flag`) when `path` cannot be
// used: empty, a directory, already existing without `overwrite`, or not creatable. Creates nothing.
void check_output_path(const std::string& path, bool overwrite, const std::string& flag, MPI_Comm comm);

// Collective. `recorder` must be finished(). Throws std::runtime_error on an HDF5 failure. Replaces an
// earlier result's rank directory under the same name (a one-file result leaves none).
void write_series_file(const std::string& path, const SeriesRecorder& recorder, const RunMetadata& meta,
                       const std::vector<SummaryValue>& summary, MPI_Comm comm,
                       const SeriesFileOptions& options = {});

// The directory that holds the per-rank layout's rank files next to result file `path` ("<path>.ranks").
std::string rank_directory(const std::string& path);

// Build facts for /meta.
std::string warpsim_version();
std::string git_revision();  // "unknown" when the build had no git checkout

}  // namespace warpsim::io
