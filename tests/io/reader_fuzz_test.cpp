// Fuzz test of the input readers (issue #25): the spec loaders (experiment, job and cluster specs, text and
// JSON), the Chakra trace reader and the HDF5 series-file readers of `warpsim inspect`, fed deterministic
// mutations of real inputs (bit flips, interesting bytes, truncations, insertions, deletions, duplicated
// ranges and, for text, numbers replaced by extreme values). Each case must either succeed or throw the
// exception the front end turns into one `warpsim: error:` line and exit 2 (std::invalid_argument or
// experiment::SettingError) with a one-line message, and must print nothing to stderr itself. A signal, an
// abort, another exception type, a multi-line message or stray stderr output fails the test.
//
// Run by tests/io/reader_fuzz.sh, which passes the seed HDF5 file (a short PHOLD run's --output) in
// WARPSIM_FUZZ_H5; WARPSIM_FUZZ_CASES scales the number of cases per seed (default 1 = the CI size).
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "experiment/setting_error.hpp"
#include "experiment/spec/cluster_spec.hpp"
#include "experiment/spec/experiment_spec.hpp"
#include "experiment/spec/job_spec.hpp"
#include "io/hdf5_inspect.hpp"
#include "io/trace_export.hpp"
#include "models/workload/chakra/chakra_trace.hpp"

namespace warpsim {
namespace {

namespace fs = std::filesystem;
using Bytes = std::string;

const fs::path kSource = WARPSIM_SOURCE_DIR;
const fs::path kChakra = WARPSIM_CHAKRA_DATA_DIR;

Bytes file_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

int scale() {
  const char* s = std::getenv("WARPSIM_FUZZ_CASES");
  return s ? std::max(1, std::atoi(s)) : 1;
}

// One deterministic mutation of `in` (the case number seeds it), 1-4 edits stacked.
Bytes mutate(const Bytes& in, std::uint64_t seed, bool text) {
  std::mt19937_64 rng(seed);
  auto below = [&](std::size_t n) { return n == 0 ? std::size_t{0} : static_cast<std::size_t>(rng() % n); };
  static const char* const kNumbers[] = {
      "0",     "1",     "-1",     "4294967295", "4294967296",           "2147483648",
      "65536", "1e308", "-1e308", "nan",        "18446744073709551615", "99999999999999999999999"};
  static const unsigned char kBytes[] = {0x00, 0xff, 0x7f, 0x80, 0x01, '{', '}', '"', '\n', ':'};
  Bytes out = in;
  const int edits = 1 + static_cast<int>(below(4));
  for (int e = 0; e < edits; ++e) {
    switch (below(text ? 8 : 7)) {
      case 0:  // flip one bit
        if (!out.empty()) out[below(out.size())] ^= static_cast<char>(1u << below(8));
        break;
      case 1:  // an interesting byte
        if (!out.empty()) out[below(out.size())] = static_cast<char>(kBytes[below(sizeof kBytes)]);
        break;
      case 2:  // truncate
        out.resize(below(out.size() + 1));
        break;
      case 3: {  // insert random bytes
        Bytes junk(1 + below(16), '\0');
        for (char& c : junk) c = static_cast<char>(rng());
        out.insert(below(out.size() + 1), junk);
        break;
      }
      case 4:  // delete a range
        if (!out.empty()) {
          const std::size_t at = below(out.size());
          out.erase(at, 1 + below(std::min<std::size_t>(64, out.size() - at)));
        }
        break;
      case 5:  // duplicate a range
        if (!out.empty()) {
          const std::size_t at = below(out.size());
          const Bytes piece = out.substr(at, 1 + below(64));
          out.insert(below(out.size() + 1), piece);
        }
        break;
      case 6:  // overwrite a range with zeros
        if (!out.empty()) {
          const std::size_t at = below(out.size());
          std::fill_n(out.begin() + static_cast<std::ptrdiff_t>(at),
                      std::min<std::size_t>(out.size() - at, 1 + below(256)), '\0');
        }
        break;
      case 7: {  // text: a number becomes an extreme value (reaches validation, not just the parser)
        std::vector<std::size_t> starts;
        for (std::size_t i = 0; i < out.size(); ++i) {
          if (std::isdigit(static_cast<unsigned char>(out[i])) &&
              (i == 0 || !std::isalnum(static_cast<unsigned char>(out[i - 1]))))
            starts.push_back(i);
        }
        if (starts.empty()) break;
        const std::size_t at = starts[below(starts.size())];
        std::size_t end = at;
        while (end < out.size() && (std::isdigit(static_cast<unsigned char>(out[end])) || out[end] == '.'))
          ++end;
        out.replace(at, end - at, kNumbers[below(std::size(kNumbers))]);
        break;
      }
    }
  }
  return out;
}

// Redirects file descriptor 2 into a temporary file for its lifetime; text() is what was written.
class StderrCapture {
 public:
  StderrCapture() {
    std::fflush(stderr);
    file_ = std::tmpfile();
    saved_ = dup(2);
    dup2(fileno(file_), 2);
  }
  ~StderrCapture() {
    restore();
    std::fclose(file_);
  }
  std::string text() {
    restore();
    std::rewind(file_);
    std::string s;
    for (int c; (c = std::fgetc(file_)) != EOF;) s += static_cast<char>(c);
    return s;
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    dup2(saved_, 2);
    close(saved_);
    saved_ = -1;
  }
  std::FILE* file_ = nullptr;
  int saved_ = -1;
};

struct Tally {
  int ok = 0;
  int refused = 0;
};

// Runs one case: success, or a front-end error (exit 2) with a one-line message, and silence on stderr.
void check_case(const std::string& what, const std::function<void()>& read, Tally& tally) {
  std::string error;
  bool bad_type = false;
  StderrCapture capture;
  try {
    read();
  } catch (const std::invalid_argument& e) {
    error = e.what();
  } catch (const experiment::SettingError& e) {
    error = e.what();
  } catch (const std::exception& e) {
    error = e.what();
    bad_type = true;
  }
  const std::string stray = capture.text();
  EXPECT_FALSE(bad_type) << what << ": an exception the front end treats as fatal (MPI_Abort): " << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << what << ": multi-line error: " << error;
  EXPECT_TRUE(stray.empty()) << what << ": the reader printed to stderr: " << stray;
  ++(error.empty() ? tally.ok : tally.refused);
}

void report(const std::string& name, const Tally& t) {
  std::printf("%s: %d cases, %d read, %d refused with one line\n", name.c_str(), t.ok + t.refused, t.ok,
              t.refused);
}

constexpr int kSpecCases = 150;  // per seed file
constexpr int kTraceCases = 600;
constexpr int kHdf5Cases = 300;

TEST(ReaderFuzz, Specs) {
  std::vector<fs::path> experiments;
  for (const fs::path& dir : {kSource / "examples", kSource / "examples" / "economics"}) {
    for (const auto& entry : fs::directory_iterator(dir))
      if (entry.path().extension() == ".textproto") experiments.push_back(entry.path());
  }
  std::vector<fs::path> jobs;
  for (const fs::path& dir :
       {kSource / "models/workload/examples", kSource / "models/workload/examples/megatron-table1"}) {
    for (const auto& entry : fs::directory_iterator(dir))
      if (entry.path().extension() == ".txtpb") jobs.push_back(entry.path());
  }
  std::vector<fs::path> clusters;
  for (const auto& entry : fs::directory_iterator(kSource / "examples/clusters"))
    clusters.push_back(entry.path());
  std::sort(experiments.begin(), experiments.end());
  std::sort(jobs.begin(), jobs.end());
  std::sort(clusters.begin(), clusters.end());
  ASSERT_FALSE(experiments.empty());
  ASSERT_FALSE(jobs.empty());
  ASSERT_FALSE(clusters.empty());
  const int cases = kSpecCases * scale();
  Tally tally;
  std::uint64_t seed = 1;

  for (const fs::path& p : experiments) {
    const Bytes original = file_bytes(p);
    for (int i = 0; i < cases; ++i, ++seed) {
      const Bytes text = mutate(original, seed, true);
      check_case(
          p.filename().string() + " case " + std::to_string(seed),
          [&] { (void)spec::validated(spec::parse_experiment_spec(text, "fuzz.textproto")); }, tally);
    }
  }
  for (const fs::path& p : jobs) {
    const Bytes original = file_bytes(p);
    // The same job as JSON, the other syntax the loader takes.
    std::string json;
    ASSERT_TRUE(google::protobuf::util::MessageToJsonString(spec::parse_job_spec_text(original), &json).ok());
    for (int i = 0; i < cases; ++i, ++seed) {
      const bool as_json = i % 2 == 1;
      const Bytes text = mutate(as_json ? json : original, seed, true);
      check_case(
          p.filename().string() + (as_json ? " (json)" : "") + " case " + std::to_string(seed),
          [&] {
            const spec::JobSpec job = as_json ? spec::parse_job_spec_json(text, "fuzz.json")
                                              : spec::parse_job_spec_text(text, "fuzz.txtpb");
            (void)spec::to_job_params(job);
          },
          tally);
    }
  }
  for (const fs::path& p : clusters) {
    const Bytes original = file_bytes(p);
    for (int i = 0; i < cases; ++i, ++seed) {
      const Bytes text = mutate(original, seed, true);
      check_case(
          p.filename().string() + " case " + std::to_string(seed),
          [&] {
            (void)spec::to_cluster_params(
                spec::validated(spec::parse_cluster_spec(text, p.filename().string())));
          },
          tally);
    }
  }
  report("specs", tally);
}

TEST(ReaderFuzz, ChakraTraces) {
  if (!fs::exists(kChakra)) GTEST_SKIP() << "shared Chakra traces not found at " << kChakra << " (skipped)";
  const fs::path seeds[] = {kChakra / "astra-sim_all_reduce_8npus_1MB/all_reduce.0.et",
                            kChakra / "astra-sim_custom_ring_allreduce_8npus_1MB/custom_allreduce.0.et"};
  const int cases = kTraceCases * scale();
  Tally tally;
  std::uint64_t seed = 1'000'000;
  for (const fs::path& p : seeds) {
    const Bytes original = file_bytes(p);
    ASSERT_FALSE(original.empty()) << p;
    for (int i = 0; i < cases; ++i, ++seed) {
      const Bytes bytes = mutate(original, seed, false);
      check_case(
          p.filename().string() + " case " + std::to_string(seed),
          [&] {
            const auto trace = workload::chakra::parse_trace(
                {reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()}, "fuzz.et");
            (void)workload::chakra::to_ops(trace, 8);
          },
          tally);
    }
  }
  report("chakra traces", tally);
}

// Each HDF5 case runs in a child process, as `warpsim inspect` would: HDF5 1.10 itself crashes on some
// damaged files (the readers' CrashGuard turns that into one line and exit 2), and a damaged file can leave
// the library unable to close at exit. The child exits 0 (read), 2 (one `warpsim: error:` line) or fails.
TEST(ReaderFuzz, Hdf5SeriesFiles) {
  const char* seed_file = std::getenv("WARPSIM_FUZZ_H5");
  if (!seed_file) GTEST_SKIP() << "WARPSIM_FUZZ_H5 not set (tests/io/reader_fuzz.sh makes the seed file)";
  const Bytes original = file_bytes(seed_file);
  ASSERT_FALSE(original.empty()) << seed_file;
  const fs::path dir = fs::temp_directory_path() / ("warpsim_reader_fuzz_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string h5 = (dir / "case.h5").string(), json = (dir / "case.json").string();
  const std::string err_file = (dir / "stderr.txt").string();
  const int cases = kHdf5Cases * scale();
  Tally tally;
  int hung = 0, unclosed = 0;
  std::uint64_t seed = 2'000'000;
  for (int i = 0; i < cases; ++i, ++seed) {
    // Mostly a few bit flips: a file that still opens reaches the deeper readers.
    Bytes bytes = original;
    if (i % 4 == 0) {
      bytes = mutate(original, seed, false);
    } else {
      std::mt19937_64 rng(seed);
      for (int e = 0, n = 1 + static_cast<int>(rng() % 8); e < n; ++e)
        bytes[rng() % bytes.size()] ^= static_cast<char>(1u << (rng() % 8));
    }
    { std::ofstream(h5, std::ios::binary | std::ios::trunc) << bytes; }
    std::fflush(nullptr);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      const int fd = open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      dup2(fd, 2);
      close(fd);
      alarm(5);
      // HDF5 1.10 trusts a damaged variable-length string's length and clears that many bytes (gigabytes, for
      // minutes) before it fails; capped address space makes the allocation fail at once, and the read with
      // it.
      const rlimit memory{std::uint64_t{2} << 30, std::uint64_t{2} << 30};
      setrlimit(RLIMIT_AS, &memory);
      int code = 0;
      try {
        std::ostringstream out;
        io::describe_series_file(h5, out);
        io::print_summary(h5, out);
        for (const std::string& metric : io::list_metrics(h5)) (void)io::hottest_components(h5, metric, 5);
        io::TraceSelection sel;
        sel.max_components = 4;
        (void)io::export_trace(h5, json, sel);
      } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "warpsim: error: %s\n", e.what());
        code = 2;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "fatal (the front end would MPI_Abort): %s\n", e.what());
        code = 3;
      }
      std::exit(code);  // runs HDF5's own shutdown, as the binary's exit does
    }
    int status = 0;
    waitpid(child, &status, 0);
    std::string err = file_bytes(err_file);
    // Known and not fixed: after some damaged superblocks HDF5 1.10 cannot release its objects and prints
    // "HDF5: infinite loop closing library" and a line of object types when the process exits, even after
    // close_hdf5_quietly(). Counted and reported; every other stray line fails.
    if (const auto at = err.find("HDF5: infinite loop closing library\n"); at != std::string::npos) {
      const auto detail_end = err.find('\n', err.find('\n', at) + 1);
      err.erase(at, detail_end == std::string::npos ? std::string::npos : detail_end + 1 - at);
      ++unclosed;
    }
    const std::string what = "series file case " + std::to_string(seed);
    // Known and not fixed: on a few damaged files HDF5 1.10 itself spins for minutes (e.g. clearing a
    // damaged variable-length string's buffer). Counted and reported, not failed; any other signal fails.
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
      ++hung;
      std::printf("series file case %llu: still reading after 5 s (HDF5 library), skipped\n",
                  static_cast<unsigned long long>(seed));
      continue;
    }
    ASSERT_TRUE(WIFEXITED(status)) << what << ": killed by signal " << WTERMSIG(status) << ": " << err;
    const int code = WEXITSTATUS(status);
    EXPECT_TRUE(code == 0 || code == 2) << what << ": exit " << code << ": " << err;
    EXPECT_LE(std::count(err.begin(), err.end(), '\n'), code == 0 ? 0 : 1) << what << ": stderr: " << err;
    ++(code == 0 ? tally.ok : tally.refused);
  }
  fs::remove_all(dir);
  report("hdf5 series files", tally);
  std::printf("hdf5 series files: %d cases still reading after 5 s (HDF5 library), not counted\n", hung);
  std::printf("hdf5 series files: %d cases printed HDF5's 'infinite loop closing library' at exit\n",
              unclosed);
  EXPECT_LE(hung, cases / 20) << "more HDF5 hangs than the known few";
  EXPECT_LE(unclosed, cases / 20) << "more HDF5 shutdown failures than the known few";
}

}  // namespace
}  // namespace warpsim
