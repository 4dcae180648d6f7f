// Small serial readers for warpsim series files, shared by the inspector and the trace export.
#pragma once

#include <cstdint>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "io/hdf5_handle.hpp"

namespace warpsim::io {

// Silences HDF5's automatic error-stack printing for its lifetime (restores the previous handler): a reader
// reports a failure as one exception, not as HDF5-DIAG lines on stderr.
class QuietErrors {
 public:
  QuietErrors() {
    H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~QuietErrors() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }
  QuietErrors(const QuietErrors&) = delete;
  QuietErrors& operator=(const QuietErrors&) = delete;

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

// HDF5 1.10 can crash on some damaged files (a segmentation fault inside the library). While a CrashGuard
// lives, such a signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) writes `line` to stderr and ends the
// process with exit code 2, the code of every other bad-input error, instead of a crash report. Nests.
class CrashGuard {
 public:
  explicit CrashGuard(const std::string& line);
  ~CrashGuard();
  CrashGuard(const CrashGuard&) = delete;
  CrashGuard& operator=(const CrashGuard&) = delete;
};

// After a failed read: closes the HDF5 library with stderr muted. A damaged file can leave HDF5 objects it
// cannot release, and the library would print "HDF5: infinite loop closing library" lines at exit. The
// library re-opens on its next use.
void close_hdf5_quietly();

// Runs `read()` on the series file `path` with HDF5's error printing off. A failure of the HDF5 library or of
// the file's structure (a damaged or foreign file) becomes one std::invalid_argument naming the file; the
// readers' own std::invalid_argument errors (unknown metric, bad flag) pass unchanged.
template <typename Read>
auto read_series_file(const std::string& path, Read&& read) -> decltype(read()) {
  const std::string damaged = "'" + path + "' is damaged or not a warpsim series file";
  std::string error;
  {
    CrashGuard guard("warpsim: error: " + damaged + " (the HDF5 library crashed reading it)\n");
    QuietErrors quiet;
    try {
      return read();
    } catch (const std::invalid_argument&) {
      throw;
    } catch (const std::bad_alloc&) {
      error = damaged + " (a dataset too large)";
    } catch (const std::exception& e) {
      error = damaged + " (" + e.what() + ")";
    }
  }
  close_hdf5_quietly();
  throw std::invalid_argument(error);
}

// For HDF5 iteration callbacks: runs `body()` and keeps its exception in `*error` (returning -1, which stops
// the iteration) instead of letting it unwind through the C library.
template <typename Body>
herr_t guarded_callback(std::exception_ptr* error, Body&& body) noexcept {
  try {
    return body();
  } catch (...) {
    *error = std::current_exception();
    return -1;
  }
}

// Largest block (values) a reader allocates at once; a shape beyond it is a damaged file.
inline constexpr std::uint64_t kMaxReadValues = std::uint64_t{1} << 27;

// The number of elements of an attribute (`attribute` true) or a dataset; throws when HDF5 cannot tell.
// Readers that read one value check it is 1: a damaged file may hold an array where a scalar belongs.
std::uint64_t element_count(hid_t object, bool attribute);

// Opens read-only; throws std::invalid_argument when the file is missing or not HDF5.
h5::Handle open_series_file(const std::string& path);
// A string attribute (fixed or variable length), or "" when absent.
std::string read_text_attribute(hid_t object, const std::string& name);
// (name, value, unit) of every /summary dataset, in name order.
std::vector<std::tuple<std::string, double, std::string>> read_summary(hid_t file);
// "kind/metric" for every /series/<kind>/<metric> dataset.
std::vector<std::string> series_metrics(hid_t file);
// /series/time in picoseconds.
std::vector<std::uint64_t> read_sample_times(hid_t file);

struct SeriesDataset {
  h5::Handle dataset;
  std::string kind;
  std::string metric;
  std::uint64_t components = 0;
  std::uint64_t samples = 0;
};
// `metric` is "kind/name"; throws std::invalid_argument naming it when absent.
SeriesDataset open_series(hid_t file, const std::string& metric);
// Rows [first, first + rows) as a row-major [rows, samples] block.
std::vector<double> read_rows(const SeriesDataset& series, std::uint64_t first, std::uint64_t rows);
// /components/<kind>/name, or an empty vector when the kind has no names.
std::vector<std::string> component_names(hid_t file, const std::string& kind, std::uint64_t count);

}  // namespace warpsim::io
