// The per-rank layout of the HDF5 series output (see hdf5_per_rank_writer.hpp).
#include "io/hdf5_per_rank_writer.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <thread>

#include "io/hdf5_write_helpers.hpp"

namespace warpsim::io::detail {

std::string rank_file_name(int rank) {
  char name[32];
  std::snprintf(name, sizeof name, "rank-%05d.h5", rank);
  return name;
}

namespace {

// Rows of one rank's file: global ids first, first + stride, ... (count of them), stored at rows
// [offset, offset + count) of that rank's datasets. Arithmetic runs, so that a block partition needs one
// mapping per block and a round-robin one a single mapping per rank.
struct RowRun {
  std::uint64_t first = 0;
  std::uint64_t stride = 1;
  std::uint64_t count = 0;
  std::uint64_t offset = 0;
};

// Greedy: each run takes as many following ids as keep its first step.
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
    const std::vector<std::uint32_t> order = id_order(kind);
    const std::size_t n = order.size();
    std::vector<std::uint64_t> rows(n);  // this file's row numbers, all of them
    std::iota(rows.begin(), rows.end(), 0);
    h5::Handle cg = make_group(components, kind.name);
    // The attributes go on the result file's virtual datasets.
    write_component_tables(cg, kind, order, rows, n, name_widths[k], false, plain, H5P_DEFAULT);
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
        recorder.copy_tile(k, m, order, 0, samples, values.data(), samples);
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
                   const std::string& source, hid_t plain) {
  if (rows == 0) {  // a kind without components (packet NICs under flow fidelity): an empty plain dataset
    write_rows(parent, name, file_type, file_type, {}, 0, columns, nullptr, plain, H5P_DEFAULT);
    return;
  }
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
                        const std::vector<std::uint64_t>& name_widths, int ranks) {
  h5::Handle file =
      h5::file(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), "creating " + tmp);
  h5::Handle plain = h5::plist(H5Pcreate(H5P_DATASET_CREATE), "dataset creation list");
  const std::uint64_t samples = recorder.sample_count();
  h5::Handle series = write_head(file, recorder, meta, summary, MPI_COMM_SELF, H5P_DEFAULT, plain);
  {
    // Where the rows are, for readers that check before they read (open_series_file()).
    h5::Handle g = h5::group(H5Gopen2(file, "meta", H5P_DEFAULT), "opening /meta");
    write_text_attribute(g, "rank_directory", rank_dir);
    write_scalar_attribute(g, "rank_files", H5T_NATIVE_INT64, static_cast<std::int64_t>(ranks));
  }
  h5::Handle components = make_group(file, "components");
  for (std::uint32_t k = 0; k < recorder.kinds().size(); ++k) {
    const SeriesRecorder::Kind& kind = recorder.kinds()[k];
    const std::string prefix = "/components/" + kind.name + "/";
    h5::Handle cg = make_group(components, kind.name);
    write_virtual(cg, "id", H5T_STD_U64LE, kind.component_count, 0, runs[k], rank_dir, prefix + "id", plain);
    if (name_widths[k] > 0) {
      h5::Handle t = fixed_string_type(name_widths[k]);
      write_virtual(cg, "name", t, kind.component_count, 0, runs[k], rank_dir, prefix + "name", plain);
    }
    for (const ColumnSpec& spec : kind.columns) {
      write_virtual(cg, spec.name, spec.real ? H5T_IEEE_F64LE : H5T_STD_I64LE, kind.component_count, 0,
                    runs[k], rank_dir, prefix + spec.name, plain);
      write_column_attributes(cg, spec);
    }
    h5::Handle sg = make_group(series, kind.name);
    for (const MetricSpec& metric : kind.metrics) {
      if (kind.component_count == 0 || samples == 0) {
        write_rows(sg, metric.name, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, {}, kind.component_count, samples,
                   nullptr, plain, H5P_DEFAULT);
      } else {
        write_virtual(sg, metric.name, H5T_IEEE_F64LE, kind.component_count, samples, runs[k], rank_dir,
                      "/series/" + kind.name + "/" + metric.name, plain);
      }
      write_metric_attributes(sg, metric, kind.name);
    }
  }
  file.close(tmp);
}

}  // namespace

// Collective: the per-rank layout, written under `tmp` (the result) and `tmp_dir` (the rank files); the rank
// files are named in the result file as `final_dir` (relative).
void write_per_rank(const std::string& tmp, const std::string& tmp_dir, const std::string& final_dir,
                    const SeriesRecorder& recorder, const RunMetadata& meta,
                    const std::vector<SummaryValue>& summary, MPI_Comm comm,
                    const SeriesFileOptions& options) {
  namespace fs = std::filesystem;
  const int rank = rank_of(comm);
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
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
      write_virtual_file(tmp, final_dir, recorder, meta, summary, runs, name_widths, ranks);
    } catch (const std::exception& e) {
      problem = e.what();
    }
  }
  problem = broadcast_text(std::move(problem), comm);
  if (!problem.empty()) throw std::runtime_error(problem);
}

}  // namespace warpsim::io::detail
