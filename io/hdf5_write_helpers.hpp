// Building blocks shared by the HDF5 series writers (hdf5_series_writer.cpp: one file, collective;
// hdf5_per_rank_writer.cpp: a file per rank joined by virtual datasets): attributes, groups, row writes,
// the series' chunk layout, directly stored compressed chunks, and the /meta, /summary, /series/time head.
#pragma once

#include <hdf5.h>
#include <mpi.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/series_recorder.hpp"
#include "io/chunk_compressor.hpp"
#include "io/hdf5_handle.hpp"
#include "io/hdf5_series_writer.hpp"

namespace warpsim::io::detail {

int rank_of(MPI_Comm comm);
// Rank 0's verdict (empty = fine) becomes every rank's.
std::string broadcast_text(std::string text, MPI_Comm comm);

void write_text_attribute(hid_t object, const std::string& name, const std::string& value);
template <class T>
void write_scalar_attribute(hid_t object, const std::string& name, hid_t type, T value) {
  h5::Handle space = h5::space(H5Screate(H5S_SCALAR), "scalar space");
  h5::Handle attr = h5::attribute(H5Acreate2(object, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT),
                                  "creating attribute " + name);
  h5::check(H5Awrite(attr, type, &value), "writing attribute " + name);
}

h5::Handle make_group(hid_t parent, const std::string& name);

// Selects the rows `sorted_ids` (ascending) of a [rows] or [rows, columns] file space as a union of
// contiguous runs (one run per rank for block partitions).
void select_rows(hid_t file_space, const std::vector<std::uint64_t>& sorted_ids, hsize_t columns);
// Write of this rank's rows (`data` holds them in ascending id order) into a new dataset; collective when
// `dxpl` says so. columns == 0: a 1-D dataset of `rows` values.
void write_rows(hid_t parent, const std::string& name, hid_t mem_type, hid_t file_type,
                const std::vector<std::uint64_t>& sorted_ids, std::uint64_t rows, hsize_t columns,
                const void* data, hid_t dcpl, hid_t dxpl);
// Creation list of a [rows, samples] series dataset: chunked, deflated at `deflate_level` (0 = not).
h5::Handle series_dcpl(std::uint64_t rows, std::uint64_t samples, int deflate_level);

// A chunked dataset whose chunks are being compressed by a ChunkCompressor, in submission order.
struct DirectChunks {
  h5::Handle dataset;
  std::vector<std::array<hsize_t, 2>> offsets;  // the chunks' first (row, sample), as submitted
};

// Queues every chunk of a [rows, samples] dataset whose row r is local component order[r]'s samples of
// `metric` (read from the recorder by the workers). The writes come later (store_chunks), so that the workers
// compress while the writing thread creates the next datasets.
void queue_chunks(ChunkCompressor& compressor, DirectChunks& target, hid_t dcpl,
                  std::shared_ptr<const std::vector<std::uint32_t>> order, const SeriesRecorder& recorder,
                  SeriesRecorder::KindId kind, std::uint32_t metric, std::uint64_t samples);
// Writes the queued chunks, in the order queue_chunks submitted them.
void store_chunks(ChunkCompressor& compressor, std::vector<DirectChunks>& targets);

// /meta, /summary and /series with its time axis (written by rank 0 of `comm`); returns /series.
h5::Handle write_head(hid_t file, const SeriesRecorder& recorder, const RunMetadata& meta,
                      const std::vector<SummaryValue>& summary, MPI_Comm comm, hid_t dxpl, hid_t plain);
// The local components of `kind` in ascending id order (positions in kind.ids).
std::vector<std::uint32_t> id_order(const SeriesRecorder::Kind& kind);
// A fixed-width, null-padded string type of `width` bytes (parallel HDF5 cannot write variable-length data
// collectively).
h5::Handle fixed_string_type(std::uint64_t width);
// /components/<kind> datasets of this rank's components (`order`, from id_order()): `id`, `name` when
// `name_width` > 0 (the widest name over all ranks) and one dataset per descriptive column, each of
// `row_count` rows, this rank's going to file rows `rows` (ascending). With `attributes`, every column
// dataset also gets its unit and description.
void write_component_tables(hid_t group, const SeriesRecorder::Kind& kind,
                            const std::vector<std::uint32_t>& order, const std::vector<std::uint64_t>& rows,
                            std::uint64_t row_count, std::uint64_t name_width, bool attributes, hid_t plain,
                            hid_t dxpl);

// The descriptive attributes of column dataset `spec.name` / series dataset `metric.name` under `parent`.
void write_column_attributes(hid_t parent, const ColumnSpec& spec);
void write_metric_attributes(hid_t parent, const MetricSpec& metric, const std::string& kind_name);

}  // namespace warpsim::io::detail
