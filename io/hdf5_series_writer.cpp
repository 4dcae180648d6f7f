// Parallel HDF5 writer for per-component time series (see hdf5_series_writer.hpp, docs/hdf5-layout.md).
// Every rank makes the same sequence of HDF5 metadata calls (creating groups, datasets and attributes is
// collective in parallel HDF5) and writes only the rows of the components it owns, collectively.
#include "io/hdf5_series_writer.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <thread>

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

// /meta, /summary and /series with its time axis (written by rank 0 of `comm`); returns /series.
h5::Handle write_head(hid_t file, const SeriesRecorder& recorder, const RunMetadata& meta,
                      const std::vector<SummaryValue>& summary, MPI_Comm comm, hid_t dxpl, hid_t plain) {
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
  return series;
}

void write_column_attributes(hid_t parent, const ColumnSpec& spec) {
  h5::Handle ds = h5::dataset(H5Dopen2(parent, spec.name.c_str(), H5P_DEFAULT), "opening " + spec.name);
  write_text_attribute(ds, "unit", spec.unit);
  write_text_attribute(ds, "description", spec.description);
}

void write_metric_attributes(hid_t parent, const MetricSpec& metric, const std::string& kind_name) {
  h5::Handle ds = h5::dataset(H5Dopen2(parent, metric.name.c_str(), H5P_DEFAULT), "opening " + metric.name);
  write_text_attribute(ds, "unit", metric.unit);
  write_text_attribute(ds, "aggregation", std::string(to_string(metric.aggregation)));
  write_text_attribute(ds, "description", metric.description);
  write_text_attribute(ds, "dimensions", "component, sample");
  write_text_attribute(ds, "component_ids", "/components/" + kind_name + "/id");
  write_text_attribute(ds, "time", "/series/time");
}

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
      write_column_attributes(cg, spec);
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
      write_metric_attributes(sg, metric, kind.name);
    }
  }
  if (compressor != nullptr) store_chunks(*compressor, direct);
}

// --- Per-rank layout: every rank writes its own rows to its own file with the one-rank writer's fast path
// (chunks deflated by worker threads, stored with H5Dwrite_chunk, no MPI-IO), and rank 0 writes the result
// file, whose /components and /series datasets are virtual datasets (VDS) mapping each rank's rows.

// Rows of one rank's file: global ids first, first + stride, ... (count of them), stored at rows
// [offset, offset + count) of that rank's datasets. Arithmetic runs, so that a block partition needs one
// mapping per block and a round-robin one a single mapping per rank.
struct RowRun {
  std::uint64_t first = 0;
  std::uint64_t stride = 1;
  std::uint64_t count = 0;
  std::uint64_t offset = 0;
};

std::vector<RowRun> row_runs(const std::vector<std::uint64_t>& sorted_ids) {
  std::vector<RowRun> runs;
  for (std::size_t i = 0; i < sorted_ids.size();) {
    std::size_t j = i + 1;
    const std::uint64_t stride = j < sorted_ids.size() ? sorted_ids[j] - sorted_ids[i] : 1;
    while (j < sorted_ids.size() && sorted_ids[j] - sorted_ids[j - 1] == stride) ++j;
    runs.push_back({sorted_ids[i], stride, j - i, i});
    i = j;
  }
  return runs;
}

// Every rank's runs, on rank 0 (index = rank); empty elsewhere.
std::vector<std::vector<RowRun>> gather_runs(const std::vector<RowRun>& mine, MPI_Comm comm) {
  static_assert(sizeof(RowRun) == 4 * sizeof(std::uint64_t));
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  const int words = static_cast<int>(mine.size() * 4);
  std::vector<int> counts(static_cast<std::size_t>(ranks)), displs(static_cast<std::size_t>(ranks));
  MPI_Gather(&words, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
  std::vector<std::uint64_t> all;
  if (rank_of(comm) == 0) {
    std::partial_sum(counts.begin(), counts.end() - 1, displs.begin() + 1);
    all.resize(static_cast<std::size_t>(displs.back() + counts.back()));
  }
  MPI_Gatherv(mine.data(), words, MPI_UINT64_T, all.data(), counts.data(), displs.data(), MPI_UINT64_T, 0,
              comm);
  std::vector<std::vector<RowRun>> runs;
  if (rank_of(comm) != 0) return runs;
  runs.resize(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    const auto* first = reinterpret_cast<const RowRun*>(all.data() + displs[static_cast<std::size_t>(r)]);
    runs[static_cast<std::size_t>(r)].assign(first, first + counts[static_cast<std::size_t>(r)] / 4);
  }
  return runs;
}

std::string rank_file_name(int rank) {
  char name[32];
  std::snprintf(name, sizeof name, "rank-%05d.h5", rank);
  return name;
}

// This rank's file: per kind, /components/<kind>/{id,name,<columns>} [local] and /series/<kind>/<metric>
// [local, samples], rows in ascending id order. `name_widths`: per kind, the widest name over all ranks
// (0 = no names), so that every rank's name dataset has the virtual one's type.
void write_rank_file(const std::string& path, const SeriesRecorder& recorder,
                     const std::vector<std::uint64_t>& name_widths, int deflate_level) {
  h5::Handle file =
      h5::file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), "creating " + path);
  h5::Handle plain = h5::plist(H5Pcreate(H5P_DATASET_CREATE), "dataset creation list");
  std::optional<ChunkCompressor> compressor;
  if (deflate_level > 0) compressor.emplace(deflate_level);
  std::vector<DirectChunks> direct;
  const std::uint64_t samples = recorder.sample_count();
  h5::Handle components = make_group(file, "components");
  h5::Handle series = make_group(file, "series");
  for (std::uint32_t k = 0; k < recorder.kinds().size(); ++k) {
    const SeriesRecorder::Kind& kind = recorder.kinds()[k];
    const std::size_t n = kind.ids.size();
    std::vector<std::uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](auto a, auto b) { return kind.ids[a] < kind.ids[b]; });
    std::vector<std::uint64_t> rows(n), sorted_ids(n);  // rows: this file's row numbers, all of them
    std::iota(rows.begin(), rows.end(), 0);
    for (std::size_t i = 0; i < n; ++i) sorted_ids[i] = kind.ids[order[i]];
    h5::Handle cg = make_group(components, kind.name);
    write_rows(cg, "id", H5T_NATIVE_UINT64, H5T_STD_U64LE, rows, n, 0, sorted_ids.data(), plain, H5P_DEFAULT);
    if (const std::uint64_t width = name_widths[k]; width > 0) {
      std::vector<char> names(n * width, '\0');
      for (std::size_t i = 0; i < n; ++i)
        std::memcpy(names.data() + i * width, kind.names[order[i]].data(), kind.names[order[i]].size());
      h5::Handle t = h5::type(H5Tcopy(H5T_C_S1), "string type");
      h5::check(H5Tset_size(t, width), "sizing names");
      h5::check(H5Tset_strpad(t, H5T_STR_NULLPAD), "padding names");
      write_rows(cg, "name", t, t, rows, n, 0, names.data(), plain, H5P_DEFAULT);
    }
    const std::size_t ncols = kind.columns.size();
    for (std::size_t col = 0; col < ncols; ++col) {
      std::vector<double> reals(n);
      std::vector<std::int64_t> ints(n);
      for (std::size_t i = 0; i < n; ++i) {
        reals[i] = kind.column_values[static_cast<std::size_t>(order[i]) * ncols + col];
        ints[i] = static_cast<std::int64_t>(reals[i]);
      }
      if (kind.columns[col].real) {
        write_rows(cg, kind.columns[col].name, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, rows, n, 0, reals.data(),
                   plain, H5P_DEFAULT);
      } else {
        write_rows(cg, kind.columns[col].name, H5T_NATIVE_INT64, H5T_STD_I64LE, rows, n, 0, ints.data(),
                   plain, H5P_DEFAULT);
      }
    }
    h5::Handle sg = make_group(series, kind.name);
    h5::Handle dcpl = series_dcpl(n, samples, deflate_level);
    const auto shared_order = std::make_shared<const std::vector<std::uint32_t>>(order);
    std::vector<double> values(compressor && n > 0 && samples > 0 ? 0 : n * samples);
    for (std::uint32_t m = 0; m < kind.metrics.size(); ++m) {
      const std::string& name = kind.metrics[m].name;
      if (compressor && n > 0 && samples > 0) {
        const hsize_t dims[2] = {n, samples};
        h5::Handle file_space = h5::space(H5Screate_simple(2, dims, nullptr), "file space for " + name);
        direct.push_back({h5::dataset(H5Dcreate2(sg, name.c_str(), H5T_IEEE_F64LE, file_space, H5P_DEFAULT,
                                                 dcpl, H5P_DEFAULT),
                                      "creating dataset " + name),
                          {}});
        queue_chunks(*compressor, direct.back(), dcpl, shared_order, recorder, k, m, samples);
      } else {
        for (std::size_t i = 0; i < n; ++i)
          recorder.copy_samples(k, m, order[i], 0, samples, values.data() + i * samples);
        write_rows(sg, name, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, rows, n, samples, values.data(), dcpl,
                   H5P_DEFAULT);
      }
    }
  }
  if (compressor) store_chunks(*compressor, direct);
  file.close(path);
}

// Rank 0: a virtual dataset `name` of `rows` x `columns` (columns 0: 1-D) whose rows come from dataset
// `source` of every rank's file, as `runs` say.
void write_virtual(hid_t parent, const std::string& name, hid_t file_type, std::uint64_t rows,
                   hsize_t columns, const std::vector<std::vector<RowRun>>& runs, const std::string& rank_dir,
                   const std::string& source) {
  const int rank2 = columns == 0 ? 1 : 2;
  const hsize_t dims[2] = {rows, columns};
  h5::Handle vspace = h5::space(H5Screate_simple(rank2, dims, nullptr), "virtual space for " + name);
  h5::Handle dcpl = h5::plist(H5Pcreate(H5P_DATASET_CREATE), "virtual dataset creation list");
  // What a reader gets where a rank file is missing (the result copied without its rank directory): NaN or
  // the largest id, never a plausible 0.
  if (H5Tget_class(file_type) == H5T_FLOAT) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    h5::check(H5Pset_fill_value(dcpl, H5T_NATIVE_DOUBLE, &nan), "setting the fill value of " + name);
  } else if (H5Tget_class(file_type) == H5T_INTEGER) {
    const std::int64_t none =
        H5Tget_sign(file_type) == H5T_SGN_NONE ? -1 : std::numeric_limits<std::int64_t>::min();
    h5::check(H5Pset_fill_value(
                  dcpl, H5Tget_sign(file_type) == H5T_SGN_NONE ? H5T_NATIVE_UINT64 : H5T_NATIVE_INT64, &none),
              "setting the fill value of " + name);
  }
  for (std::size_t r = 0; r < runs.size(); ++r) {
    std::uint64_t local = 0;
    for (const RowRun& run : runs[r]) local = std::max(local, run.offset + run.count);
    if (local == 0) continue;
    const hsize_t src_dims[2] = {local, columns};
    h5::Handle sspace = h5::space(H5Screate_simple(rank2, src_dims, nullptr), "source space for " + name);
    const std::string file_name = rank_dir + "/" + rank_file_name(static_cast<int>(r));
    for (const RowRun& run : runs[r]) {
      const hsize_t vstart[2] = {run.first, 0}, vstride[2] = {run.stride, 1}, vcount[2] = {run.count, 1},
                    block[2] = {1, std::max<hsize_t>(columns, 1)};
      h5::check(H5Sselect_hyperslab(vspace, H5S_SELECT_SET, vstart, vstride, vcount, block),
                "selecting rows");
      const hsize_t sstart[2] = {run.offset, 0}, scount[2] = {run.count, 1};
      h5::check(H5Sselect_hyperslab(sspace, H5S_SELECT_SET, sstart, nullptr, scount, block),
                "selecting rows");
      h5::check(H5Pset_virtual(dcpl, vspace, file_name.c_str(), source.c_str(), sspace), "mapping " + name);
    }
  }
  h5::Handle ds =
      h5::dataset(H5Dcreate2(parent, name.c_str(), file_type, vspace, H5P_DEFAULT, dcpl, H5P_DEFAULT),
                  "creating virtual dataset " + name);
}

// Rank 0's result file: /meta, /summary and /series/time as in the one-file layout; /components and /series
// datasets virtual, over the rank files in `rank_dir` (a path relative to the result file's directory, where
// HDF5 looks for them when the file is read).
void write_virtual_file(const std::string& tmp, const std::string& rank_dir, const SeriesRecorder& recorder,
                        const RunMetadata& meta, const std::vector<SummaryValue>& summary,
                        const std::vector<std::vector<std::vector<RowRun>>>& runs,
                        const std::vector<std::uint64_t>& name_widths) {
  h5::Handle file =
      h5::file(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), "creating " + tmp);
  h5::Handle plain = h5::plist(H5Pcreate(H5P_DATASET_CREATE), "dataset creation list");
  const std::uint64_t samples = recorder.sample_count();
  h5::Handle series = write_head(file, recorder, meta, summary, MPI_COMM_SELF, H5P_DEFAULT, plain);
  {
    // Where the rows are, for readers that check before they read (open_series_file()).
    h5::Handle g = h5::group(H5Gopen2(file, "meta", H5P_DEFAULT), "opening /meta");
    write_text_attribute(g, "rank_directory", rank_dir);
    write_scalar_attribute(g, "rank_files", H5T_NATIVE_INT64, static_cast<std::int64_t>(runs.front().size()));
  }
  h5::Handle components = make_group(file, "components");
  for (std::uint32_t k = 0; k < recorder.kinds().size(); ++k) {
    const SeriesRecorder::Kind& kind = recorder.kinds()[k];
    const std::string prefix = "/components/" + kind.name + "/";
    h5::Handle cg = make_group(components, kind.name);
    write_virtual(cg, "id", H5T_STD_U64LE, kind.component_count, 0, runs[k], rank_dir, prefix + "id");
    if (name_widths[k] > 0) {
      h5::Handle t = h5::type(H5Tcopy(H5T_C_S1), "string type");
      h5::check(H5Tset_size(t, name_widths[k]), "sizing names");
      h5::check(H5Tset_strpad(t, H5T_STR_NULLPAD), "padding names");
      write_virtual(cg, "name", t, kind.component_count, 0, runs[k], rank_dir, prefix + "name");
    }
    for (const ColumnSpec& spec : kind.columns) {
      write_virtual(cg, spec.name, spec.real ? H5T_IEEE_F64LE : H5T_STD_I64LE, kind.component_count, 0,
                    runs[k], rank_dir, prefix + spec.name);
      write_column_attributes(cg, spec);
    }
    h5::Handle sg = make_group(series, kind.name);
    for (const MetricSpec& metric : kind.metrics) {
      if (kind.component_count == 0 || samples == 0) {
        write_rows(sg, metric.name, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, {}, kind.component_count, samples,
                   nullptr, plain, H5P_DEFAULT);
      } else {
        write_virtual(sg, metric.name, H5T_IEEE_F64LE, kind.component_count, samples, runs[k], rank_dir,
                      "/series/" + kind.name + "/" + metric.name);
      }
      write_metric_attributes(sg, metric, kind.name);
    }
  }
  file.close(tmp);
}

// Collective: the per-rank layout, written under `tmp` (the result) and `tmp_dir` (the rank files); the rank
// files are named in the result file as `final_dir` (relative).
void write_per_rank(const std::string& tmp, const std::string& tmp_dir, const std::string& final_dir,
                    const SeriesRecorder& recorder, const RunMetadata& meta,
                    const std::vector<SummaryValue>& summary, MPI_Comm comm,
                    const SeriesFileOptions& options) {
  namespace fs = std::filesystem;
  const int rank = rank_of(comm);
  std::string problem;
  if (rank == 0) {
    std::error_code ec;
    fs::remove_all(tmp_dir, ec);
    if (!fs::create_directory(tmp_dir, ec)) problem = "creating directory '" + tmp_dir + "': " + ec.message();
  }
  problem = broadcast_text(std::move(problem), comm);
  if (!problem.empty()) throw std::runtime_error(problem);
  const std::size_t kinds = recorder.kinds().size();
  std::vector<std::uint64_t> name_widths(kinds), registered(kinds);
  for (std::size_t k = 0; k < kinds; ++k) {
    for (const std::string& n : recorder.kinds()[k].names)
      name_widths[k] = std::max<std::uint64_t>(name_widths[k], n.size());
    registered[k] = recorder.kinds()[k].ids.size();
  }
  MPI_Allreduce(MPI_IN_PLACE, name_widths.data(), static_cast<int>(kinds), MPI_UINT64_T, MPI_MAX, comm);
  MPI_Allreduce(MPI_IN_PLACE, registered.data(), static_cast<int>(kinds), MPI_UINT64_T, MPI_SUM, comm);
  for (std::size_t k = 0; k < kinds; ++k) {
    const SeriesRecorder::Kind& kind = recorder.kinds()[k];
    if (registered[k] != kind.component_count) {
      throw std::runtime_error("kind '" + kind.name + "': " + std::to_string(registered[k]) +
                               " components registered over all ranks, " +
                               std::to_string(kind.component_count) + " declared");
    }
  }
  // Each rank's own file; a failure anywhere fails every rank.
  try {
    write_rank_file(tmp_dir + "/" + rank_file_name(rank), recorder, name_widths, options.deflate_level);
  } catch (const std::exception& e) {
    problem = e.what();
  }
  // Ranks finish their files at different times (busy components compress slower). One that is done waits
  // asleep, not spinning in a blocking collective: its core then goes to the compressing threads of the
  // ranks still writing.
  int failed = problem.empty() ? 0 : 1;
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Iallreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm, &request);
  for (int done = 0; MPI_Test(&request, &done, MPI_STATUS_IGNORE), done == 0;)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  if (failed != 0)
    throw std::runtime_error(problem.empty() ? "writing another rank's series file failed" : problem);
  std::vector<std::vector<std::vector<RowRun>>> runs(kinds);
  for (std::size_t k = 0; k < kinds; ++k) {
    const SeriesRecorder::Kind& kind = recorder.kinds()[k];
    std::vector<std::uint64_t> sorted_ids = kind.ids;
    std::sort(sorted_ids.begin(), sorted_ids.end());
    runs[k] = gather_runs(row_runs(sorted_ids), comm);
  }
  if (rank == 0) {
    try {
      write_virtual_file(tmp, final_dir, recorder, meta, summary, runs, name_widths);
    } catch (const std::exception& e) {
      problem = e.what();
    }
  }
  problem = broadcast_text(std::move(problem), comm);
  if (!problem.empty()) throw std::runtime_error(problem);
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
