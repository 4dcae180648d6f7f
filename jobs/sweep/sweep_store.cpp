// The sweep output folder (see sweep_store.hpp).
#include "jobs/sweep/sweep_store.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <google/protobuf/text_format.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>

#include "engine/hash.hpp"
#include "io/hdf5_handle.hpp"

namespace warpsim::sweep {

namespace fs = std::filesystem;

namespace {


std::string column_name(std::string key) {
  for (char& c : key) {
    if (c == ' ') c = '_';
  }
  return key;
}

// Holds an flock for its lifetime.
class FileLock {
 public:
  explicit FileLock(const std::string& path) : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ < 0) throw std::runtime_error("cannot open lock file " + path);
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) throw std::runtime_error("cannot lock " + path);
    }
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock() { ::close(fd_); }  // closing releases the lock

 private:
  int fd_;
};

std::string temp_name(const std::string& path) {
  return path + ".tmp-" + std::to_string(::getpid());
}

void write_index_h5(const std::string& path, const std::vector<IndexRow>& rows) {
  namespace h5 = io::h5;
  const auto& keys = index_metric_keys();
  // One compound record per experiment: strings as variable-length UTF-8, metrics as doubles (NaN when the
  // experiment has no result), readable as a table by h5py/pandas.
  struct Record {
    std::uint64_t index;
    const char* id;
    const char* name;
    const char* status;
    const char* overrides;
    const char* state_digest;
  };
  const std::size_t metrics_offset = sizeof(Record);
  const std::size_t record_size = metrics_offset + keys.size() * sizeof(double);
  const h5::Handle str = h5::string_type();
  const h5::Handle type = h5::type(H5Tcreate(H5T_COMPOUND, record_size), "creating the index record type");
  h5::check(H5Tinsert(type, "index", offsetof(Record, index), H5T_NATIVE_UINT64), "index field");
  h5::check(H5Tinsert(type, "id", offsetof(Record, id), str), "id field");
  h5::check(H5Tinsert(type, "name", offsetof(Record, name), str), "name field");
  h5::check(H5Tinsert(type, "status", offsetof(Record, status), str), "status field");
  h5::check(H5Tinsert(type, "overrides", offsetof(Record, overrides), str), "overrides field");
  h5::check(H5Tinsert(type, "state_digest", offsetof(Record, state_digest), str), "state_digest field");
  for (std::size_t k = 0; k < keys.size(); ++k) {
    h5::check(
        H5Tinsert(type, column_name(keys[k]).c_str(), metrics_offset + k * sizeof(double), H5T_NATIVE_DOUBLE),
        "metric field");
  }
  std::vector<unsigned char> buffer(std::max<std::size_t>(1, rows.size()) * record_size);
  static const std::string empty;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const IndexRow& row = rows[r];
    Record rec{row.entry.index,    row.entry.id.c_str(),        row.entry.name.c_str(),
               row.status.c_str(), row.entry.overrides.c_str(), empty.c_str()};
    if (const auto it = row.values.find("state digest"); it != row.values.end())
      rec.state_digest = it->second.c_str();
    unsigned char* at = buffer.data() + r * record_size;
    std::memcpy(at, &rec, sizeof rec);
    for (std::size_t k = 0; k < keys.size(); ++k) {
      double v = std::numeric_limits<double>::quiet_NaN();
      if (const auto it = row.values.find(keys[k]); it != row.values.end()) {
        char* end = nullptr;
        const double parsed = std::strtod(it->second.c_str(), &end);
        if (end != it->second.c_str()) v = parsed;
      }
      std::memcpy(at + metrics_offset + k * sizeof(double), &v, sizeof v);
    }
  }
  h5::Handle file =
      h5::file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), "creating " + path);
  const hsize_t dims[1] = {rows.size()};
  const h5::Handle space = h5::space(H5Screate_simple(1, dims, nullptr), "index dataspace");
  h5::Handle ds =
      h5::dataset(H5Dcreate2(file, "experiments", type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                  "creating /experiments");
  if (!rows.empty())
    h5::check(H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer.data()), "writing /experiments");
  ds.close("/experiments");
  file.close(path);
}

}  // namespace

const std::vector<std::string>& index_metric_keys() {
  static const std::vector<std::string> keys{
      "gpus", "steps", "step seconds", "estimate step seconds", "tokens per second", "tflops per gpu",
      "model tflops per gpu", "mfu", "hfu", "compute fraction", "bubble fraction",
      "exposed communication fraction", "network bytes per gpu per step", "events committed", "wall seconds",
      // Economics (docs/energy-cost.md): NaN without cost/reliability.
      "goodput", "it energy joules per token", "cost usd per million tokens",
      "carbon kgco2e per million tokens", "training run cost usd"};
  return keys;
}

void write_file_atomically(const std::string& path, const std::string& content) {
  const std::string tmp = temp_name(path);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << content;
    out.flush();
    if (!out) throw std::runtime_error("cannot write " + tmp);
  }
  fs::rename(tmp, path);
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::map<std::string, std::string> parse_summary(const std::string& text) {
  std::map<std::string, std::string> values;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(": ");
    if (colon == std::string::npos || colon == 0) continue;
    values.emplace(line.substr(0, colon), line.substr(colon + 2));
  }
  return values;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (const char c : s) {
    out += c;
    if (c == '"') out += '"';
  }
  return out + "\"";
}

SweepStore::SweepStore(std::string dir) : dir_(std::move(dir)) {
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
}

std::string SweepStore::experiment_path(const std::string& id) const {
  return dir_ + "/experiments/" + id + ".textproto";
}
std::string SweepStore::result_path(const std::string& id) const {
  return dir_ + "/results/" + id + ".txt";
}
std::string SweepStore::failed_path(const std::string& id) const {
  return dir_ + "/results/" + id + ".failed";
}
std::string SweepStore::h5_path(const std::string& id) const {
  return dir_ + "/results/" + id + ".h5";
}
std::string SweepStore::partial_path(const std::string& id) const {
  return dir_ + "/results/" + id + ".part";
}
std::string SweepStore::log_path(const std::string& id) const {
  return dir_ + "/logs/" + id + ".log";
}

std::vector<ManifestEntry> SweepStore::prepare(const spec::Sweep& sweep) const {
  for (const char* sub : {"", "/experiments", "/results", "/logs"}) fs::create_directories(dir_ + sub);
  std::vector<ManifestEntry> manifest;
  std::string tsv = "# index\tid\tname\toverrides (warpsim sweep manifest of '" + sweep.name + "')\n";
  for (const auto& e : sweep.experiments) {
    manifest.push_back({e.index, e.id, e.name, e.overrides_text()});
    tsv += std::to_string(e.index) + "\t" + e.id + "\t" + e.name + "\t" + e.overrides_text() + "\n";
    std::string text;
    google::protobuf::TextFormat::PrintToString(e.spec, &text);
    text = "# warpsim sweep '" + sweep.name + "' experiment " + std::to_string(e.index) + ": " +
           e.overrides_text() + "\n" + text;
    const std::string path = experiment_path(e.id);
    std::error_code ec;
    if (fs::exists(path, ec) && read_text_file(path) == text) continue;
    write_file_atomically(path, text);
  }
  if (!fs::exists(manifest_path()) || read_text_file(manifest_path()) != tsv)
    write_file_atomically(manifest_path(), tsv);
  return manifest;
}

std::vector<ManifestEntry> SweepStore::read_manifest() const {
  std::ifstream in(manifest_path());
  if (!in)
    throw std::invalid_argument("--out: " + dir_ +
                                " holds no sweep (no manifest.tsv; run `warpsim sweep SPEC --out " + dir_ +
                                "` first)");
  std::vector<ManifestEntry> manifest;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cols;
    std::size_t start = 0;
    for (int c = 0; c < 3; ++c) {
      const auto tab = line.find('\t', start);
      if (tab == std::string::npos) break;
      cols.push_back(line.substr(start, tab - start));
      start = tab + 1;
    }
    if (cols.size() != 3)
      throw std::invalid_argument(manifest_path() + ":" + std::to_string(number) +
                                  ": malformed manifest line");
    cols.push_back(line.substr(start));
    manifest.push_back({std::stoul(cols[0]), cols[1], cols[2], cols[3]});
  }
  return manifest;
}

std::string SweepStore::spec_digest(const std::string& id) const {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx",
                static_cast<unsigned long long>(fnv1a(read_text_file(experiment_path(id)), kSweepIdFnv1aBasis)));
  return buf;
}

bool SweepStore::is_done(const std::string& id) const {
  std::error_code ec;
  if (!fs::exists(result_path(id), ec)) return false;
  const auto values = parse_summary(read_text_file(result_path(id)));
  const auto it = values.find("spec digest");
  return it != values.end() && it->second == spec_digest(id);
}

void SweepStore::record(const std::string& id, int exit_code, const std::string& summary,
                        const std::string& stderr_tail) const {
  const std::string digest = spec_digest(id);
  std::error_code ec;
  if (exit_code == 0) {
    std::string text = summary;
    if (!text.empty() && text.back() != '\n') text += '\n';
    write_file_atomically(result_path(id), text + "spec digest: " + digest + "\n");
    fs::remove(failed_path(id), ec);
  } else {
    write_file_atomically(failed_path(id), "exit code: " + std::to_string(exit_code) +
                                               "\nspec digest: " + digest + "\n" + stderr_tail);
    fs::remove(result_path(id), ec);
  }
}

std::vector<IndexRow> SweepStore::rows(const std::vector<ManifestEntry>& manifest,
                                       const std::vector<std::string>& running) const {
  const std::set<std::string> busy(running.begin(), running.end());
  std::vector<IndexRow> out;
  for (const auto& e : manifest) {
    IndexRow row{e, "pending", {}};
    std::error_code ec;
    if (is_done(e.id)) {
      row.status = "done";
      row.values = parse_summary(read_text_file(result_path(e.id)));
    } else if (busy.count(e.id) != 0) {
      row.status = "running";
    } else if (fs::exists(failed_path(e.id), ec)) {
      row.status = "failed";
    }
    out.push_back(std::move(row));
  }
  return out;
}

void SweepStore::write_index(const std::vector<ManifestEntry>& manifest,
                             const std::vector<std::string>& running) const {
  const FileLock lock(dir_ + "/.index.lock");
  const auto table = rows(manifest, running);
  const auto& keys = index_metric_keys();
  // Appends only: GCC 12 warns falsely (-Wrestrict) on `"," + std::string` temporaries.
  std::string csv = "index,id,name,status,overrides";
  for (const auto& k : keys) csv.append(",").append(column_name(k));
  csv += ",state_digest\n";
  auto value_of = [](const IndexRow& row, const std::string& key) {
    const auto it = row.values.find(key);
    return it == row.values.end() ? std::string() : csv_field(it->second);
  };
  for (const auto& row : table) {
    csv.append(std::to_string(row.entry.index)).append(",").append(csv_field(row.entry.id));
    csv.append(",").append(csv_field(row.entry.name)).append(",").append(row.status);
    csv.append(",").append(csv_field(row.entry.overrides));
    for (const auto& k : keys) csv.append(",").append(value_of(row, k));
    csv.append(",").append(value_of(row, "state digest")).append("\n");
  }
  write_file_atomically(index_csv(), csv);
  const std::string tmp = temp_name(index_h5());
  write_index_h5(tmp, table);
  fs::rename(tmp, index_h5());
}

}  // namespace warpsim::sweep
