// Serial readers for warpsim series files (see hdf5_reader.hpp).
#include "io/hdf5_reader.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "io/hdf5_per_rank_writer.hpp"

namespace warpsim::io {

namespace {

herr_t collect_names(hid_t, const char* name, const H5L_info_t*, void* data) {
  auto* names = static_cast<std::vector<std::string>*>(data);
  if (names->size() >= 100'000) return -1;  // a damaged link table; the caller reports it
  names->emplace_back(name);
  return 0;
}

std::vector<std::string> children(hid_t file, const std::string& group) {
  std::vector<std::string> names;
  if (H5Lexists(file, group.c_str(), H5P_DEFAULT) <= 0) return names;
  h5::Handle g = h5::group(H5Gopen2(file, group.c_str(), H5P_DEFAULT), "opening " + group);
  h5::check(H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_names, &names), "listing " + group);
  return names;
}

std::vector<hsize_t> dims_of(hid_t ds) {
  h5::Handle space = h5::space(H5Dget_space(ds), "dataset space");
  const int n = H5Sget_simple_extent_ndims(space);
  if (n < 0 || n > H5S_MAX_RANK) throw std::runtime_error("HDF5: reading a dataset's rank failed");
  std::vector<hsize_t> dims(static_cast<std::size_t>(n));
  if (H5Sget_simple_extent_dims(space, dims.data(), nullptr) < 0)
    throw std::runtime_error("HDF5: reading a dataset's shape failed");
  return dims;
}

}  // namespace

namespace {

constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
struct sigaction g_saved[std::size(kCrashSignals)];
char g_crash_line[4096];
std::size_t g_crash_length = 0;
int g_guard_depth = 0;

void on_crash(int) {
  // Async-signal-safe: write(2) and _exit(2) only.
  [[maybe_unused]] const auto written = write(2, g_crash_line, g_crash_length);
  _exit(2);
}

}  // namespace

CrashGuard::CrashGuard(const std::string& line) {
  if (g_guard_depth++ > 0) return;
  g_crash_length = std::min(line.size(), sizeof g_crash_line);
  std::memcpy(g_crash_line, line.data(), g_crash_length);
  struct sigaction action {};
  action.sa_handler = on_crash;
  sigemptyset(&action.sa_mask);
  for (std::size_t i = 0; i < std::size(kCrashSignals); ++i)
    sigaction(kCrashSignals[i], &action, &g_saved[i]);
}

CrashGuard::~CrashGuard() {
  if (--g_guard_depth > 0) return;
  for (std::size_t i = 0; i < std::size(kCrashSignals); ++i)
    sigaction(kCrashSignals[i], &g_saved[i], nullptr);
}

void close_hdf5_quietly() {
  std::fflush(stderr);
  const int saved = dup(2);
  const int null = open("/dev/null", O_WRONLY);
  if (saved >= 0 && null >= 0) dup2(null, 2);
  H5close();
  std::fflush(stderr);
  if (saved >= 0) {
    dup2(saved, 2);
    close(saved);
  }
  if (null >= 0) close(null);
}

std::uint64_t element_count(hid_t object, bool attribute) {
  h5::Handle space =
      h5::space(attribute ? H5Aget_space(object) : H5Dget_space(object), "reading a dataspace");
  const hssize_t n = H5Sget_simple_extent_npoints(space);
  if (n < 0) throw std::runtime_error("HDF5: counting the elements of a dataspace failed");
  return static_cast<std::uint64_t>(n);
}

h5::Handle open_series_file(const std::string& path) {
  QuietErrors quiet;
  const hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (id < 0) {
    close_hdf5_quietly();  // a half-read damaged superblock can leave objects HDF5 cannot close at exit
    throw std::invalid_argument("cannot open '" + path + "' as an HDF5 file");
  }
  h5::Handle file = h5::file(id, "opening " + path);
  // A per-rank result (`--output-layout per-rank`) reads its rows from the rank files next to it; without
  // them HDF5 would quietly return fill values.
  if (H5Lexists(file, "meta", H5P_DEFAULT) > 0) {
    h5::Handle meta = h5::group(H5Gopen2(file, "meta", H5P_DEFAULT), "opening /meta");
    const std::string dir = read_text_attribute(meta, "rank_directory");
    if (!dir.empty()) {
      std::int64_t files = 0;
      h5::Handle attr = h5::attribute(H5Aopen(meta, "rank_files", H5P_DEFAULT), "opening /meta rank_files");
      if (element_count(attr, true) != 1) throw std::runtime_error("/meta rank_files is not one number");
      h5::check(H5Aread(attr, H5T_NATIVE_INT64, &files), "reading /meta rank_files");
      const std::filesystem::path base = std::filesystem::path(path).parent_path() / dir;
      for (std::int64_t r = 0; r < files; ++r) {
        const std::string name = detail::rank_file_name(static_cast<int>(r));
        if (!std::filesystem::exists(base / name)) {
          throw std::invalid_argument("'" + path + "' keeps its series in " + (base / name).string() +
                                      ", which is missing (copy the directory " + dir +
                                      " along with the file)");
        }
      }
    }
  }
  return file;
}

std::string read_text_attribute(hid_t object, const std::string& name) {
  if (H5Aexists(object, name.c_str()) <= 0) return {};
  h5::Handle attr = h5::attribute(H5Aopen(object, name.c_str(), H5P_DEFAULT), "opening attribute " + name);
  h5::Handle t = h5::type(H5Aget_type(attr), "attribute type");
  if (H5Tget_class(t) != H5T_STRING) return {};
  if (element_count(attr, true) != 1) throw std::runtime_error("attribute " + name + " is not one string");
  if (H5Tis_variable_str(t) > 0) {
    char* text = nullptr;
    h5::Handle mem = h5::string_type();
    h5::check(H5Aread(attr, mem, &text), "reading attribute " + name);
    std::string value = text ? text : "";
    H5free_memory(text);
    return value;
  }
  const std::size_t size = H5Tget_size(t);
  if (size == 0 || size > 65536) throw std::runtime_error("attribute " + name + " has an implausible size");
  std::string value(size, '\0');
  h5::check(H5Aread(attr, t, value.data()), "reading attribute " + name);
  value.erase(std::find(value.begin(), value.end(), '\0'), value.end());
  return value;
}

std::vector<std::tuple<std::string, double, std::string>> read_summary(hid_t file) {
  std::vector<std::tuple<std::string, double, std::string>> rows;
  for (const std::string& name : children(file, "summary")) {
    h5::Handle ds = h5::dataset(H5Dopen2(file, ("summary/" + name).c_str(), H5P_DEFAULT), "opening " + name);
    double value = 0;
    if (element_count(ds, false) != 1) throw std::runtime_error("/summary/" + name + " is not one number");
    h5::check(H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, &value), "reading " + name);
    rows.emplace_back(name, value, read_text_attribute(ds, "unit"));
  }
  return rows;
}

std::vector<std::string> series_metrics(hid_t file) {
  std::vector<std::string> metrics;
  for (const std::string& kind : children(file, "series")) {
    if (kind == "time") continue;
    for (const std::string& metric : children(file, "series/" + kind)) metrics.push_back(kind + "/" + metric);
  }
  return metrics;
}

std::vector<std::uint64_t> read_sample_times(hid_t file) {
  h5::Handle ds = h5::dataset(H5Dopen2(file, "series/time", H5P_DEFAULT), "opening /series/time");
  const auto dims = dims_of(ds);
  if (dims.size() != 1 || dims[0] > kMaxReadValues)
    throw std::runtime_error("/series/time is not a list of at most " + std::to_string(kMaxReadValues) +
                             " times");
  std::vector<std::uint64_t> times(dims[0]);
  if (!times.empty())
    h5::check(H5Dread(ds, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, times.data()), "reading times");
  return times;
}

SeriesDataset open_series(hid_t file, const std::string& metric) {
  const auto slash = metric.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == metric.size())
    throw std::invalid_argument("--metric: expected KIND/METRIC, got '" + metric + "'");
  const std::string path = "series/" + metric;
  bool exists = false;
  {
    QuietErrors quiet;
    exists = H5Lexists(file, ("series/" + metric.substr(0, slash)).c_str(), H5P_DEFAULT) > 0 &&
             H5Lexists(file, path.c_str(), H5P_DEFAULT) > 0;
  }
  if (!exists) {
    std::string known;
    for (const std::string& m : series_metrics(file)) known += (known.empty() ? "" : ", ") + m;
    throw std::invalid_argument("--metric: no series '" + metric + "' (available: " + known + ")");
  }
  SeriesDataset s;
  s.dataset = h5::dataset(H5Dopen2(file, path.c_str(), H5P_DEFAULT), "opening " + path);
  s.kind = metric.substr(0, slash);
  s.metric = metric.substr(slash + 1);
  const auto dims = dims_of(s.dataset);
  if (dims.size() != 2)
    throw std::invalid_argument("--metric: '" + metric + "' is not a [component, sample] dataset");
  s.components = dims[0];
  s.samples = dims[1];
  return s;
}

std::vector<double> read_rows(const SeriesDataset& series, std::uint64_t first, std::uint64_t rows) {
  if (first > series.components || rows > series.components - first)
    throw std::invalid_argument("rows beyond the " + std::to_string(series.components) + " components of " +
                                series.kind + "/" + series.metric);
  if (series.samples > kMaxReadValues || rows * series.samples > kMaxReadValues)
    throw std::runtime_error(series.kind + "/" + series.metric + " has an implausible shape (" +
                             std::to_string(series.samples) + " samples)");
  std::vector<double> values(rows * series.samples);
  if (values.empty()) return values;
  h5::Handle file_space = h5::space(H5Dget_space(series.dataset), "dataset space");
  const hsize_t start[2] = {first, 0};
  const hsize_t count[2] = {rows, series.samples};
  h5::check(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr),
            "selecting rows");
  h5::Handle mem_space = h5::space(H5Screate_simple(2, count, nullptr), "memory space");
  h5::check(H5Dread(series.dataset, H5T_NATIVE_DOUBLE, mem_space, file_space, H5P_DEFAULT, values.data()),
            "reading rows");
  return values;
}

std::vector<std::string> component_names(hid_t file, const std::string& kind, std::uint64_t count) {
  const std::string path = "components/" + kind + "/name";
  {
    QuietErrors quiet;
    if (H5Lexists(file, ("components/" + kind).c_str(), H5P_DEFAULT) <= 0 ||
        H5Lexists(file, path.c_str(), H5P_DEFAULT) <= 0)
      return {};
  }
  h5::Handle ds = h5::dataset(H5Dopen2(file, path.c_str(), H5P_DEFAULT), "opening " + path);
  h5::Handle t = h5::type(H5Dget_type(ds), "name type");
  const std::size_t width = H5Tget_size(t);
  if (H5Tget_class(t) != H5T_STRING || H5Tis_variable_str(t) > 0 || width == 0) return {};
  const auto dims = dims_of(ds);
  if (dims.size() != 1 || dims[0] != count || width > 4096 || count * width > kMaxReadValues)
    throw std::runtime_error(path + " does not hold one name per component");
  std::vector<char> raw(count * width);
  if (count) h5::check(H5Dread(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw.data()), "reading " + path);
  std::vector<std::string> names(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    const char* p = raw.data() + i * width;
    names[i].assign(p, std::find(p, p + width, '\0'));
  }
  return names;
}

}  // namespace warpsim::io
