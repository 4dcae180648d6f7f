// Building blocks shared by the HDF5 series writers (see hdf5_write_helpers.hpp).
#include "io/hdf5_write_helpers.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>

namespace warpsim::io::detail {

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
        const std::span<const std::uint32_t> locals(order->data() + r0, r1 - r0);
        recorder.copy_tile(kind, metric, locals, s0, s1, out.data(), width);
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
  const auto write_scalars = [dxpl](hid_t g, const std::string& path, const std::vector<SummaryValue>& values) {
    for (const SummaryValue& s : values) {
      h5::Handle space = h5::space(H5Screate(H5S_SCALAR), "scalar space");
      h5::Handle ds = h5::dataset(
          H5Dcreate2(g, s.name.c_str(), H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
          "creating /" + path + "/" + s.name);
      // Every rank passes the same value; a collective write of a scalar is fine.
      h5::check(H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, dxpl, &s.value),
                "writing /" + path + "/" + s.name);
      write_text_attribute(ds, "unit", s.unit);
    }
  };
  {
    h5::Handle g = make_group(file, "summary");
    write_scalars(g, "summary", summary);
  }
  if (!meta.result_groups.empty()) {
    h5::Handle lcpl = h5::plist(H5Pcreate(H5P_LINK_CREATE), "link creation list");
    h5::check(H5Pset_create_intermediate_group(lcpl, 1), "intermediate groups");
    for (const auto& [path, values] : meta.result_groups) {
      h5::Handle g = h5::group(H5Gcreate2(file, path.c_str(), lcpl, H5P_DEFAULT, H5P_DEFAULT),
                               "creating group " + path);
      write_scalars(g, path, values);
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

std::vector<std::uint32_t> id_order(const SeriesRecorder::Kind& kind) {
  std::vector<std::uint32_t> order(kind.ids.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return kind.ids[a] < kind.ids[b]; });
  return order;
}

h5::Handle fixed_string_type(std::uint64_t width) {
  h5::Handle t = h5::type(H5Tcopy(H5T_C_S1), "string type");
  h5::check(H5Tset_size(t, width), "sizing names");
  h5::check(H5Tset_strpad(t, H5T_STR_NULLPAD), "padding names");
  return t;
}

void write_component_tables(hid_t group, const SeriesRecorder::Kind& kind,
                            const std::vector<std::uint32_t>& order, const std::vector<std::uint64_t>& rows,
                            std::uint64_t row_count, std::uint64_t name_width, bool attributes, hid_t plain,
                            hid_t dxpl) {
  const std::size_t n = order.size();
  std::vector<std::uint64_t> ids(n);
  for (std::size_t i = 0; i < n; ++i) ids[i] = kind.ids[order[i]];
  write_rows(group, "id", H5T_NATIVE_UINT64, H5T_STD_U64LE, rows, row_count, 0, ids.data(), plain, dxpl);
  if (name_width > 0) {
    std::vector<char> names(n * name_width, '\0');
    for (std::size_t i = 0; i < n; ++i)
      std::memcpy(names.data() + i * name_width, kind.names[order[i]].data(), kind.names[order[i]].size());
    h5::Handle t = fixed_string_type(name_width);
    write_rows(group, "name", t, t, rows, row_count, 0, names.data(), plain, dxpl);
  }
  // Descriptive columns (topology coordinates and the like), one dataset each.
  const std::size_t ncols = kind.columns.size();
  for (std::size_t col = 0; col < ncols; ++col) {
    const ColumnSpec& spec = kind.columns[col];
    std::vector<double> reals(n);
    std::vector<std::int64_t> ints(n);
    for (std::size_t i = 0; i < n; ++i) {
      reals[i] = kind.column_values[static_cast<std::size_t>(order[i]) * ncols + col];
      ints[i] = static_cast<std::int64_t>(reals[i]);
    }
    if (spec.real) {
      write_rows(group, spec.name, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, rows, row_count, 0, reals.data(), plain,
                 dxpl);
    } else {
      write_rows(group, spec.name, H5T_NATIVE_INT64, H5T_STD_I64LE, rows, row_count, 0, ints.data(), plain,
                 dxpl);
    }
    if (attributes) write_column_attributes(group, spec);
  }
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

}  // namespace warpsim::io::detail
