// Parallel HDF5 writer for per-component time series (see hdf5_series_writer.hpp, docs/hdf5-layout.md).
// Every rank makes the same sequence of HDF5 metadata calls (creating groups, datasets and attributes is
// collective in parallel HDF5) and writes only the rows of the components it owns, collectively.
#include "io/hdf5_series_writer.hpp"

#include <algorithm>
#include <array>
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

namespace {

int rank_of(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

// Rank 0's verdict (empty = fine) becomes every rank's.
std::string broadcast_text(std::string text, MPI_Comm comm) {
  int length = static_cast<int>(text.size());
  MPI_Bcast(&length, 1, MPI_INT, 0, comm);
  text.resize(static_cast<std::size_t>(length));
  if (length > 0) MPI_Bcast(text.data(), length, MPI_CHAR, 0, comm);
  return text;
}

void write_text_attribute(hid_t object, const std::string& name, const std::string& value) {
  h5::Handle type = h5::string_type();
  h5::Handle space = h5::space(H5Screate(H5S_SCALAR), "scalar space");
  h5::Handle attr = h5::attribute(H5Acreate2(object, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT),
                                  "creating attribute " + name);
  const char* data = value.c_str();
  h5::check(H5Awrite(attr, type, &data), "writing attribute " + name);
}

template <class T>
void write_scalar_attribute(hid_t object, const std::string& name, hid_t type, T value) {
  h5::Handle space = h5::space(H5Screate(H5S_SCALAR), "scalar space");
  h5::Handle attr = h5::attribute(H5Acreate2(object, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT),
                                  "creating attribute " + name);
  h5::check(H5Awrite(attr, type, &value), "writing attribute " + name);
}

h5::Handle make_group(hid_t parent, const std::string& name) {
  return h5::group(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                   "creating group " + name);
}

// Selects the rows `sorted_ids` (ascending) of a [rows] or [rows, columns] file space as a union of
// contiguous runs (one run per rank for block partitions).
void select_rows(hid_t file_space, const std::vector<std::uint64_t>& sorted_ids, hsize_t columns) {
  if (sorted_ids.empty()) {
    h5::check(H5Sselect_none(file_space), "empty selection");
    return;
  }
  H5S_seloper_t op = H5S_SELECT_SET;
  for (std::size_t i = 0; i < sorted_ids.size();) {
    std::size_t j = i + 1;
    while (j < sorted_ids.size() && sorted_ids[j] == sorted_ids[j - 1] + 1) ++j;
    const hsize_t start[2] = {sorted_ids[i], 0};
    const hsize_t count[2] = {j - i, columns};
    h5::check(H5Sselect_hyperslab(file_space, op, start, nullptr, count, nullptr), "selecting rows");
    op = H5S_SELECT_OR;
    i = j;
  }
}

// Collective write of this rank's rows (`data` holds them in ascending id order) into a new dataset.
void write_rows(hid_t parent, const std::string& name, hid_t mem_type, hid_t file_type,
                const std::vector<std::uint64_t>& sorted_ids, std::uint64_t rows, hsize_t columns,
                const void* data, hid_t dcpl, hid_t dxpl) {
  const int rank2 = columns > 0 ? 2 : 1;
  const hsize_t dims[2] = {rows, columns};
  h5::Handle file_space = h5::space(H5Screate_simple(rank2, dims, nullptr), "file space for " + name);
  h5::Handle ds =
      h5::dataset(H5Dcreate2(parent, name.c_str(), file_type, file_space, H5P_DEFAULT, dcpl, H5P_DEFAULT),
                  "creating dataset " + name);
  // An empty dataset (a kind without components, e.g. packet NICs under flow fidelity) has nothing to
  // write, and a collective write of nothing fails in MPI-IO. `rows` is the same on every rank.
  if (rows == 0 || (rank2 == 2 && columns == 0)) return;
  select_rows(file_space, sorted_ids, columns);
  const hsize_t elements = sorted_ids.size() * (rank2 == 2 ? columns : 1);
  // One run of rows (one rank, or a block partition): a memory space of the selection's own shape. HDF5
  // then maps whole chunks at once; a flat memory space against a 2-D selection makes it map every element
  // to its chunk one by one (H5S_select_iterate), a tenth of the write's time.
  const bool one_run = !sorted_ids.empty() && sorted_ids.back() - sorted_ids.front() + 1 == sorted_ids.size();
  const hsize_t mem_dims[2] = {one_run ? sorted_ids.size() : std::max<hsize_t>(elements, 1), columns};
  h5::Handle mem_space = h5::space(H5Screate_simple(one_run ? rank2 : 1, mem_dims, nullptr), "memory space");
  if (elements == 0) h5::check(H5Sselect_none(mem_space), "empty memory selection");
  static const double dummy = 0;
  h5::check(H5Dwrite(ds, mem_type, mem_space, file_space, dxpl, elements == 0 ? &dummy : data),
            "writing dataset " + name);
}

h5::Handle series_dcpl(std::uint64_t rows, std::uint64_t samples, int deflate_level) {
  h5::Handle dcpl = h5::plist(H5Pcreate(H5P_DATASET_CREATE), "dataset creation list");
  // About 64 Ki doubles (512 KiB) per chunk: whole sample rows where they fit, many components per chunk.
  const hsize_t sample_chunk = std::max<std::uint64_t>(1, std::min<std::uint64_t>(samples, 4096));
  const hsize_t row_chunk = std::max<std::uint64_t>(
      1, std::min<std::uint64_t>(rows, std::max<std::uint64_t>(1, 65536 / sample_chunk)));
  if (rows == 0 || samples == 0) return dcpl;
  const hsize_t chunk[2] = {row_chunk, sample_chunk};
  h5::check(H5Pset_chunk(dcpl, 2, chunk), "setting the chunk shape");
  // Deflate without the byte shuffle: on these series (mostly whole numbers and long zero runs) shuffling
  // made the file larger (1.43 vs 1.22 bytes per value) and the write slower (docs/hdf5-layout.md).
  if (deflate_level > 0)
    h5::check(H5Pset_deflate(dcpl, static_cast<unsigned>(deflate_level)), "enabling deflate");
  return dcpl;
}

// A chunked dataset whose chunks are being compressed by a ChunkCompressor, in submission order.
struct DirectChunks {
  h5::Handle dataset;
  std::vector<std::array<hsize_t, 2>> offsets;  // the chunks' first (row, sample), as submitted
};

// One rank, compressed: queues every chunk of a [rows, samples] dataset whose row r is local component
// order[r]'s samples of `metric` (read from the recorder by the workers, from its blocks or its rows). The
// writes come later (store_chunks), so that the workers compress while the writing thread creates the next
// datasets.
void queue_chunks(ChunkCompressor& compressor, DirectChunks& target, hid_t dcpl,
                  std::shared_ptr<const std::vector<std::uint32_t>> order, const SeriesRecorder& recorder,
                  SeriesRecorder::KindId kind, std::uint32_t metric, std::uint64_t samples) {
  hsize_t chunk[2] = {0, 0};
  if (H5Pget_chunk(dcpl, 2, chunk) != 2) throw std::runtime_error("HDF5: reading the chunk shape failed");
  const std::uint64_t rows = order->size();
  for (std::uint64_t r0 = 0; r0 < rows; r0 += chunk[0]) {
    for (std::uint64_t s0 = 0; s0 < samples; s0 += chunk[1]) {
      const std::uint64_t r1 = std::min<std::uint64_t>(rows, r0 + chunk[0]);
      const std::uint64_t s1 = std::min<std::uint64_t>(samples, s0 + chunk[1]);
      const hsize_t width = chunk[1];
      target.offsets.push_back({r0, s0});
      compressor.submit(chunk[0] * chunk[1], [=, &recorder](std::span<double> out) {
        for (std::uint64_t r = r0; r < r1; ++r)
          recorder.copy_samples(kind, metric, (*order)[r], s0, s1, out.data() + (r - r0) * width);
      });
    }
  }
}

// Writes the queued chunks, in the order queue_chunks submitted them.
void store_chunks(ChunkCompressor& compressor, std::vector<DirectChunks>& targets) {
  for (DirectChunks& target : targets) {
    for (const auto& offset : target.offsets) {
      const std::vector<unsigned char> bytes = compressor.next();
      h5::check(H5Dwrite_chunk(target.dataset, H5P_DEFAULT, 0, offset.data(), bytes.size(), bytes.data()),
                "writing a compressed chunk");
    }
    target.dataset.close("a series dataset");
  }
}

void write_groups(hid_t file, const SeriesRecorder& recorder, const RunMetadata& meta,
                  const std::vector<SummaryValue>& summary, MPI_Comm comm, const SeriesFileOptions& options,
                  hid_t dxpl, hid_t plain, ChunkCompressor* compressor) {
  std::vector<DirectChunks> direct;  // datasets whose chunks `compressor` is compressing
  const int rank = rank_of(comm);
  {
    h5::Handle g = make_group(file, "meta");
    for (const auto& [k, v] : meta.text) write_text_attribute(g, k, v);
    for (const auto& [k, v] : meta.integers) write_scalar_attribute(g, k, H5T_NATIVE_INT64, v);
    for (const auto& [k, v] : meta.reals) write_scalar_attribute(g, k, H5T_NATIVE_DOUBLE, v);
  }
  {
    h5::Handle g = make_group(file, "summary");
    for (const SummaryValue& s : summary) {
      h5::Handle space = h5::space(H5Screate(H5S_SCALAR), "scalar space");
      h5::Handle ds = h5::dataset(
          H5Dcreate2(g, s.name.c_str(), H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
          "creating /summary/" + s.name);
      // Every rank passes the same value; a collective write of a scalar is fine.
      h5::check(H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, dxpl, &s.value),
                "writing /summary/" + s.name);
      write_text_attribute(ds, "unit", s.unit);
    }
  }

  const std::uint64_t samples = recorder.sample_count();
  h5::Handle series = make_group(file, "series");
  write_scalar_attribute(series, "interval_ps", H5T_NATIVE_UINT64, recorder.interval());
  write_scalar_attribute(series, "end_time_ps", H5T_NATIVE_UINT64, recorder.end_time());
  {
    std::vector<std::uint64_t> times(samples);
    for (std::uint64_t s = 0; s < samples; ++s) times[s] = s * recorder.interval();
    std::vector<std::uint64_t> mine;
    if (rank == 0) {
      mine.resize(samples);
      std::iota(mine.begin(), mine.end(), 0);
    }
    write_rows(series, "time", H5T_NATIVE_UINT64, H5T_STD_U64LE, mine, samples, 0, times.data(), plain, dxpl);
    h5::Handle ds = h5::dataset(H5Dopen2(series, "time", H5P_DEFAULT), "opening /series/time");
    write_text_attribute(ds, "unit", "ps");
    write_text_attribute(ds, "description", "start of each sample interval (simulated time)");
  }
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
    std::vector<std::uint32_t> order(kind.ids.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](auto a, auto b) { return kind.ids[a] < kind.ids[b]; });
    std::vector<std::uint64_t> sorted_ids(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) sorted_ids[i] = kind.ids[order[i]];

    // /components/<kind>: ids and (when any component has one) names.
    h5::Handle cg = make_group(components, kind.name);
    write_rows(cg, "id", H5T_NATIVE_UINT64, H5T_STD_U64LE, sorted_ids, kind.component_count, 0,
               sorted_ids.data(), plain, dxpl);
    std::uint64_t name_width = 0;
    for (const std::string& n : kind.names) name_width = std::max<std::uint64_t>(name_width, n.size());
    MPI_Allreduce(MPI_IN_PLACE, &name_width, 1, MPI_UINT64_T, MPI_MAX, comm);
    if (name_width > 0) {
      // Fixed width: parallel HDF5 cannot write variable-length data collectively.
      std::vector<char> names(order.size() * name_width, '\0');
      for (std::size_t i = 0; i < order.size(); ++i)
        std::memcpy(names.data() + i * name_width, kind.names[order[i]].data(), kind.names[order[i]].size());
      h5::Handle t = h5::type(H5Tcopy(H5T_C_S1), "string type");
      h5::check(H5Tset_size(t, name_width), "sizing names");
      h5::check(H5Tset_strpad(t, H5T_STR_NULLPAD), "padding names");
      write_rows(cg, "name", t, t, sorted_ids, kind.component_count, 0, names.data(), plain, dxpl);
    }
    // Descriptive columns (topology coordinates and the like), one dataset each.
    const std::size_t ncols = kind.columns.size();
    for (std::size_t col = 0; col < ncols; ++col) {
      const ColumnSpec& spec = kind.columns[col];
      std::vector<double> reals(order.size());
      std::vector<std::int64_t> ints(order.size());
      for (std::size_t i = 0; i < order.size(); ++i) {
        reals[i] = kind.column_values[static_cast<std::size_t>(order[i]) * ncols + col];
        ints[i] = static_cast<std::int64_t>(reals[i]);
      }
      if (spec.real) {
        write_rows(cg, spec.name, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, sorted_ids, kind.component_count, 0,
                   reals.data(), plain, dxpl);
      } else {
        write_rows(cg, spec.name, H5T_NATIVE_INT64, H5T_STD_I64LE, sorted_ids, kind.component_count, 0,
                   ints.data(), plain, dxpl);
      }
      h5::Handle ds = h5::dataset(H5Dopen2(cg, spec.name.c_str(), H5P_DEFAULT), "opening " + spec.name);
      write_text_attribute(ds, "unit", spec.unit);
      write_text_attribute(ds, "description", spec.description);
    }

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
        for (std::size_t i = 0; i < order.size(); ++i)
          recorder.copy_samples(k, m, order[i], 0, samples, rows.data() + i * samples);
      }
      if (compressor == nullptr || !chunked) {
        write_rows(sg, metric.name, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, sorted_ids, kind.component_count,
                   samples, data, dcpl, dxpl);
      }
      h5::Handle ds = h5::dataset(H5Dopen2(sg, metric.name.c_str(), H5P_DEFAULT), "opening " + metric.name);
      write_text_attribute(ds, "unit", metric.unit);
      write_text_attribute(ds, "aggregation", std::string(to_string(metric.aggregation)));
      write_text_attribute(ds, "description", metric.description);
      write_text_attribute(ds, "dimensions", "component, sample");
      write_text_attribute(ds, "component_ids", "/components/" + kind.name + "/id");
      write_text_attribute(ds, "time", "/series/time");
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
  if (!recorder.finished()) throw std::logic_error("write_series_file: the recorder is not finished");
  const std::string tmp = path + ".partial";
  try {
    write_file(tmp, recorder, meta, summary, comm, options);
  } catch (...) {
    if (rank_of(comm) == 0) std::remove(tmp.c_str());
    throw;
  }
  // Every rank has closed the file (H5Fclose is collective); only now may it take its final name.
  MPI_Barrier(comm);
  std::string problem;
  if (rank_of(comm) == 0 && std::rename(tmp.c_str(), path.c_str()) != 0) {
    problem = "renaming '" + tmp + "' to '" + path + "': " + std::strerror(errno);
  }
  problem = broadcast_text(std::move(problem), comm);
  if (!problem.empty()) throw std::runtime_error(problem);
}

}  // namespace warpsim::io
