// HDF5 writer for per-component time series (see hdf5_series_writer.hpp, docs/hdf5-layout.md). The one-file
// layout is here: every rank makes the same sequence of HDF5 metadata calls (creating groups, datasets and
// attributes is collective in parallel HDF5) and writes only the rows of the components it owns,
// collectively. The per-rank layout is in hdf5_per_rank_writer.cpp; both take their final names here.
#include "io/hdf5_series_writer.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <numeric>
#include <optional>
#include <stdexcept>

#include "io/chunk_compressor.hpp"
#include "io/hdf5_handle.hpp"
#include "io/hdf5_per_rank_writer.hpp"
#include "io/hdf5_write_helpers.hpp"

#ifndef WARPSIM_VERSION
#define WARPSIM_VERSION "unknown"
#endif
#ifndef WARPSIM_GIT_REVISION
#define WARPSIM_GIT_REVISION "unknown"
#endif

namespace warpsim::io {

std::string warpsim_version() {
  return WARPSIM_VERSION;
}
std::string git_revision() {
  return WARPSIM_GIT_REVISION;
}

using namespace detail;

namespace {

void write_groups(hid_t file, const SeriesRecorder& recorder, const RunMetadata& meta,
                  const std::vector<SummaryValue>& summary, MPI_Comm comm, const SeriesFileOptions& options,
                  hid_t dxpl, hid_t plain, ChunkCompressor* compressor) {
  std::vector<DirectChunks> direct;  // datasets whose chunks `compressor` is compressing
  const std::uint64_t samples = recorder.sample_count();
  h5::Handle series = write_head(file, recorder, meta, summary, comm, dxpl, plain);
  h5::Handle components = make_group(file, "components");

  for (std::uint32_t k = 0; k < recorder.kinds().size(); ++k) {
    const SeriesRecorder::Kind& kind = recorder.kinds()[k];
    std::uint64_t registered = kind.ids.size();
    MPI_Allreduce(MPI_IN_PLACE, &registered, 1, MPI_UINT64_T, MPI_SUM, comm);
    if (registered != kind.component_count) {
      throw std::runtime_error("kind '" + kind.name + "': " + std::to_string(registered) +
                               " components registered over all ranks, " +
                               std::to_string(kind.component_count) + " declared");
    }
    const std::vector<std::uint32_t> order = id_order(kind);
    std::vector<std::uint64_t> sorted_ids(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) sorted_ids[i] = kind.ids[order[i]];

    // /components/<kind>: ids, names (when any component has one) and descriptive columns.
    std::uint64_t name_width = 0;
    for (const std::string& n : kind.names) name_width = std::max<std::uint64_t>(name_width, n.size());
    MPI_Allreduce(MPI_IN_PLACE, &name_width, 1, MPI_UINT64_T, MPI_MAX, comm);
    h5::Handle cg = make_group(components, kind.name);
    write_component_tables(cg, kind, order, sorted_ids, kind.component_count, name_width, true, plain, dxpl);

    h5::Handle sg = make_group(series, kind.name);
    h5::Handle dcpl = series_dcpl(kind.component_count, samples, options.deflate_level);
    // One rank, compressed: the workers read each chunk's samples from the recorder (its blocks or rows).
    // Otherwise, components registered in ascending id order (the usual case) are written straight from the
    // recorder's rows when it has made them; else one metric at a time is put in id order first.
    const bool in_order = std::is_sorted(kind.ids.begin(), kind.ids.end()) && recorder.rows_made();
    const bool chunked = kind.component_count > 0 && samples > 0;
    // One metric's rows in id order, unless they are written straight from the recorder's rows.
    std::vector<double> rows(in_order || (compressor != nullptr && chunked) ? 0 : order.size() * samples);
    const auto shared_order = std::make_shared<const std::vector<std::uint32_t>>(order);
    for (std::uint32_t m = 0; m < kind.metrics.size(); ++m) {
      const MetricSpec& metric = kind.metrics[m];
      const double* data = rows.data();
      if (compressor != nullptr && chunked) {
        // One rank: the dataset is created now and its chunks go to the compressor's workers.
        const hsize_t dims[2] = {kind.component_count, samples};
        h5::Handle file_space =
            h5::space(H5Screate_simple(2, dims, nullptr), "file space for " + metric.name);
        direct.push_back({h5::dataset(H5Dcreate2(sg, metric.name.c_str(), H5T_IEEE_F64LE, file_space,
                                                 H5P_DEFAULT, dcpl, H5P_DEFAULT),
                                      "creating dataset " + metric.name),
                          {}});
        queue_chunks(*compressor, direct.back(), dcpl, shared_order, recorder, k, m, samples);
      } else if (in_order) {
        data = recorder.metric_values(k, m).data();
      } else {
        recorder.copy_tile(k, m, order, 0, samples, rows.data(), samples);
      }
      if (compressor == nullptr || !chunked) {
        write_rows(sg, metric.name, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, sorted_ids, kind.component_count,
                   samples, data, dcpl, dxpl);
      }
      write_metric_attributes(sg, metric, kind.name);
    }
  }
  if (compressor != nullptr) store_chunks(*compressor, direct);
}

void write_file(const std::string& tmp, const SeriesRecorder& recorder, const RunMetadata& meta,
                const std::vector<SummaryValue>& summary, MPI_Comm comm, const SeriesFileOptions& options) {
  // One rank writes through the plain POSIX driver: the MPI-IO collective chunk path costs selection
  // bookkeeping for nothing there. Same datasets either way.
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  h5::Handle fapl = h5::plist(H5Pcreate(H5P_FILE_ACCESS), "file access list");
  if (ranks > 1) {
    h5::check(H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL), "selecting MPI-IO");
    h5::check(H5Pset_all_coll_metadata_ops(fapl, true), "collective metadata reads");
    h5::check(H5Pset_coll_metadata_write(fapl, true), "collective metadata writes");
  }
  h5::Handle file = h5::file(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl), "creating " + tmp);
  h5::Handle dxpl = h5::plist(H5Pcreate(H5P_DATASET_XFER), "transfer list");
  if (ranks > 1) h5::check(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE), "collective transfers");
  h5::Handle plain = h5::plist(H5Pcreate(H5P_DATASET_CREATE), "dataset creation list");
  // One rank, compressed: chunks deflated by worker threads and stored directly (H5Dwrite_chunk is not
  // available through MPI-IO in this HDF5; several ranks already deflate their own rows in parallel).
  std::optional<ChunkCompressor> compressor;
  if (ranks == 1 && options.deflate_level > 0) compressor.emplace(options.deflate_level);
  write_groups(file, recorder, meta, summary, comm, options, dxpl, plain,
               compressor ? &*compressor : nullptr);
  // Every object is closed by now: H5Fclose is where the collective writes complete.
  file.close(tmp);
}

}  // namespace

void check_output_path(const std::string& path, bool overwrite, const std::string& flag, MPI_Comm comm) {
  namespace fs = std::filesystem;
  std::string problem;
  if (rank_of(comm) == 0) {
    std::error_code ec;
    const fs::file_status st = path.empty() ? fs::file_status{} : fs::status(path, ec);
    if (path.empty()) {
      problem = flag + ": empty path";
    } else if (fs::is_directory(st)) {
      problem = flag + ": '" + path + "' is a directory";
    } else if (fs::exists(st) && !overwrite) {
      problem = flag + ": '" + path + "' already exists (pass --overwrite to replace it)";
    } else {
      // The file is written next to its final name and renamed: probe that both can be created there.
      const std::string probe = path + ".partial";
      const bool existed = fs::exists(probe, ec);
      if (std::FILE* f = std::fopen(probe.c_str(), "ab")) {
        std::fclose(f);
        if (!existed) std::remove(probe.c_str());
      } else {
        problem = flag + ": cannot create '" + path + "': " + std::strerror(errno);
      }
    }
  }
  problem = broadcast_text(std::move(problem), comm);
  if (!problem.empty()) throw std::invalid_argument(problem);
}

void write_series_file(const std::string& path, const SeriesRecorder& recorder, const RunMetadata& meta,
                       const std::vector<SummaryValue>& summary, MPI_Comm comm,
                       const SeriesFileOptions& options) {
  namespace fs = std::filesystem;
  if (!recorder.finished()) throw std::logic_error("write_series_file: the recorder is not finished");
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  const bool per_rank = options.layout == SeriesLayout::kPerRank && ranks > 1;
  const std::string tmp = path + ".partial";
  const std::string dir = rank_directory(path);
  const std::string tmp_dir = dir + ".partial";
  try {
    if (per_rank) {
      write_per_rank(tmp, tmp_dir, fs::path(dir).filename().string(), recorder, meta, summary, comm, options);
    } else {
      write_file(tmp, recorder, meta, summary, comm, options);
    }
  } catch (...) {
    if (rank_of(comm) == 0) {
      std::remove(tmp.c_str());
      std::error_code ec;
      fs::remove_all(tmp_dir, ec);
    }
    throw;
  }
  // Every rank has closed its files (H5Fclose is collective); only now may they take their final names: the
  // rank files first, the result file last, so that a run that dies in between leaves no result file.
  MPI_Barrier(comm);
  std::string problem;
  if (rank_of(comm) == 0) {
    std::error_code ec;
    fs::remove_all(dir, ec);  // an earlier per-rank result's files under this name
    if (ec) {
      problem = "removing '" + dir + "': " + ec.message();
    } else if (per_rank && std::rename(tmp_dir.c_str(), dir.c_str()) != 0) {
      problem = "renaming '" + tmp_dir + "' to '" + dir + "': " + std::strerror(errno);
    } else if (std::rename(tmp.c_str(), path.c_str()) != 0) {
      problem = "renaming '" + tmp + "' to '" + path + "': " + std::strerror(errno);
    }
  }
  problem = broadcast_text(std::move(problem), comm);
  if (!problem.empty()) throw std::runtime_error(problem);
}

std::string rank_directory(const std::string& path) {
  return path + ".ranks";
}

}  // namespace warpsim::io
