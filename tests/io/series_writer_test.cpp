// The parallel writer on 1/2/4 ranks: gauge and counter metrics land in global id order whatever rank owns
// each component (round-robin here, and fewer components than ranks so some ranks own none), with units,
// aggregation and names; the file appears only under its final name.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/series_recorder.hpp"
#include "io/hdf5_reader.hpp"
#include "io/hdf5_series_writer.hpp"

namespace warpsim {
namespace {

std::string shared_temp_path(const char* name) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char dir[4096] = {};
  if (rank == 0) {
    const std::string base = (std::filesystem::temp_directory_path() / "warpsim-io-XXXXXX").string();
    std::vector<char> buf(base.begin(), base.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    std::snprintf(dir, sizeof dir, "%s", buf.data());
  }
  MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
  return std::string(dir) + "/" + name;
}

std::vector<double> read_all(hid_t file, const std::string& metric) {
  const io::SeriesDataset s = io::open_series(file, metric);
  return io::read_rows(s, 0, s.components);
}

TEST(SeriesWriter, GaugesAndCountersLandInGlobalIdOrderOnAnyRankCount) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  constexpr std::uint64_t kComponents = 3;
  SeriesRecorder r(10, 35);  // 4 samples, the last one 5 ps long
  const auto kind = r.declare_kind("port", kComponents,
                                   {MetricSpec{"bytes", "bytes", Aggregation::kSum, "bytes sent"},
                                    MetricSpec{"queue_peak", "packets", Aggregation::kMax, ""},
                                    MetricSpec{"busy", "fraction", Aggregation::kTimeAverage, ""}});
  for (std::uint64_t id = 0; id < kComponents; ++id) {
    if (static_cast<int>(id % static_cast<std::uint64_t>(ranks)) != rank) continue;
    const auto c = r.add_component(kind, id, "port" + std::to_string(id));
    const double k = static_cast<double>(id + 1);
    r.add(c, 0, 12, 100 * k);  // sample 1
    r.set(c, 1, 5, 2 * k);     // peak 2k in sample 0, then k from 20 on
    r.set(c, 2, 5, 1);         // busy from 5 to 20
    r.set(c, 1, 20, k);
    r.set(c, 2, 20, 0);
  }
  r.finish();
  const std::string path = shared_temp_path("series.h5");
  io::check_output_path(path, false, "--output", MPI_COMM_WORLD);
  io::write_series_file(path, r, io::RunMetadata{{{"model", "test"}}, {{"ranks", ranks}}, {}, {}},
                        {io::SummaryValue{"answer", 42, "units"}}, MPI_COMM_WORLD);
  ASSERT_TRUE(std::filesystem::exists(path));
  ASSERT_FALSE(std::filesystem::exists(path + ".partial"));
  if (rank == 0) {
    io::h5::Handle file = io::open_series_file(path);
    std::vector<double> bytes, peak, busy;
    for (std::uint64_t id = 0; id < kComponents; ++id) {
      const double k = static_cast<double>(id + 1);
      bytes.insert(bytes.end(), {0, 100 * k, 0, 0});
      peak.insert(peak.end(), {2 * k, 2 * k, k, k});
      busy.insert(busy.end(), {0.5, 1, 0, 0});  // busy over [5, 20)
    }
    EXPECT_EQ(read_all(file, "port/bytes"), bytes);
    EXPECT_EQ(read_all(file, "port/queue_peak"), peak);
    EXPECT_EQ(read_all(file, "port/busy"), busy);
    const io::SeriesDataset s = io::open_series(file, "port/busy");
    EXPECT_EQ(io::read_text_attribute(s.dataset, "unit"), "fraction");
    EXPECT_EQ(io::read_text_attribute(s.dataset, "aggregation"), "time_average");
    EXPECT_EQ(io::component_names(file, "port", kComponents),
              (std::vector<std::string>{"port0", "port1", "port2"}));
    EXPECT_EQ(io::read_sample_times(file), (std::vector<std::uint64_t>{0, 10, 20, 30}));
    const auto summary = io::read_summary(file);
    ASSERT_EQ(summary.size(), 1u);
    EXPECT_EQ(std::get<1>(summary[0]), 42.0);
  }
  // An existing file is refused without overwrite, on every rank.
  EXPECT_THROW(io::check_output_path(path, false, "--output", MPI_COMM_WORLD), std::invalid_argument);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

// Enough components and samples for several chunks in both dimensions, edge chunks included (chunks are
// at most 4096 samples wide), each rank registering its components in descending id order: the one-rank
// path (chunks compressed by worker threads) and the collective path must both put every row in place.
TEST(SeriesWriter, ManyChunksLandInGlobalIdOrderWhateverTheRegistrationOrder) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  constexpr std::uint64_t kComponents = 37;
  constexpr std::uint64_t kSamples = 5000;
  SeriesRecorder r(1, kSamples);
  const auto kind =
      r.declare_kind("nic", kComponents, {MetricSpec{"bytes", "bytes", Aggregation::kSum, "bytes sent"}});
  auto value = [](std::uint64_t id, std::uint64_t s) {
    return static_cast<double>((id * 7919 + s * 13) % 1000);
  };
  for (std::uint64_t id = kComponents; id-- > 0;) {
    if (static_cast<int>(id % static_cast<std::uint64_t>(ranks)) != rank) continue;
    const auto c = r.add_component(kind, id);
    for (std::uint64_t s = 0; s < kSamples; s += 3) r.add(c, 0, s, value(id, s));
  }
  r.finish();
  const std::string path = shared_temp_path("chunks.h5");
  io::write_series_file(path, r, io::RunMetadata{}, {}, MPI_COMM_WORLD);
  if (rank == 0) {
    io::h5::Handle file = io::open_series_file(path);
    const std::vector<double> got = read_all(file, "nic/bytes");
    ASSERT_EQ(got.size(), kComponents * kSamples);
    for (std::uint64_t id = 0; id < kComponents; ++id) {
      for (std::uint64_t s = 0; s < kSamples; ++s)
        ASSERT_EQ(got[id * kSamples + s], s % 3 == 0 ? value(id, s) : 0.0)
            << "component " << id << " sample " << s;
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

}  // namespace
}  // namespace warpsim
