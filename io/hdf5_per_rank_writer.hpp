// The per-rank layout of the HDF5 series output (`warpsim run --output-layout per-rank`): every rank writes
// its own rows to its own file with the one-rank writer's fast path (chunks deflated by worker threads,
// stored with H5Dwrite_chunk, no MPI-IO), and rank 0 writes the result file, whose /components and /series
// datasets are virtual datasets (VDS) mapping each rank's rows. Layout and measurements: docs/hdf5-layout.md.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "engine/series_recorder.hpp"
#include "io/hdf5_series_writer.hpp"

namespace warpsim::io::detail {

// Collective: the result under `tmp` and the rank files under directory `tmp_dir` (created here, replacing
// a leftover); the result file names the rank files as `final_dir`/rank-N.h5, relative to its own directory
// (HDF5 resolves them there), so the caller renames `tmp_dir` to `final_dir` next to the result. Throws
// std::runtime_error on every rank if any rank fails.
void write_per_rank(const std::string& tmp, const std::string& tmp_dir, const std::string& final_dir,
                    const SeriesRecorder& recorder, const RunMetadata& meta,
                    const std::vector<SummaryValue>& summary, MPI_Comm comm,
                    const SeriesFileOptions& options);

// "rank-NNNNN.h5": rank `rank`'s file in the rank directory.
std::string rank_file_name(int rank);

}  // namespace warpsim::io::detail
