// Chrome / Perfetto trace-event JSON export of a series file (see trace_export.hpp). Each kind is a
// "process"; each selected component is one counter track whose args carry every metric of the kind, with
// one point per sample at the sample's start (microseconds of simulated time, the format's unit).
#include "io/trace_export.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <stdexcept>

#include "io/hdf5_reader.hpp"

namespace warpsim::io {

namespace {

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string json_number(double v) {
  if (!std::isfinite(v)) return "0";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

std::vector<std::uint64_t> parse_id_ranges(const std::string& text, const std::string& flag) {
  std::vector<std::uint64_t> ids;
  std::size_t pos = 0;
  auto bad = [&]() {
    return std::invalid_argument(flag + ": expected ids like 0-15,20 (got '" + text + "')");
  };
  auto number = [&](std::size_t& p) {
    std::size_t end = p;
    while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
    if (end == p || end - p > 18) throw bad();
    const std::uint64_t v = std::stoull(text.substr(p, end - p));
    p = end;
    return v;
  };
  while (pos < text.size()) {
    const std::uint64_t lo = number(pos);
    std::uint64_t hi = lo;
    if (pos < text.size() && text[pos] == '-') hi = number(++pos);
    if (hi < lo || hi - lo > 1'000'000) throw bad();
    for (std::uint64_t v = lo; v <= hi; ++v) ids.push_back(v);
    if (pos < text.size()) {
      if (text[pos] != ',') throw bad();
      ++pos;
      if (pos == text.size()) throw bad();
    }
  }
  if (ids.empty()) throw bad();
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

namespace {

std::uint64_t export_trace_of(const std::string& h5_path, const std::string& json_path,
                              const TraceSelection& sel) {
  h5::Handle file = open_series_file(h5_path);
  const std::vector<std::uint64_t> times = read_sample_times(file);
  const std::vector<std::string> metrics = series_metrics(file);
  std::vector<std::string> kinds;
  for (const std::string& m : metrics) {
    const std::string kind = m.substr(0, m.find('/'));
    if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) kinds.push_back(kind);
  }
  for (const std::string& k : sel.kinds) {
    if (std::find(kinds.begin(), kinds.end(), k) == kinds.end())
      throw std::invalid_argument("--kind: no component kind '" + k + "' in " + h5_path);
  }
  const std::vector<std::string>& chosen = sel.kinds.empty() ? kinds : sel.kinds;

  const std::string tmp = json_path + ".partial";
  std::ofstream out(tmp);
  if (!out) throw std::invalid_argument("--trace: cannot write '" + json_path + "': " + std::strerror(errno));
  out << "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"source\":" << json_string(h5_path)
      << ",\"time_unit\":\"simulated microseconds\"},\"traceEvents\":[\n";
  std::uint64_t written = 0;
  bool first_event = true;
  auto emit = [&](const std::string& event) {
    out << (first_event ? "" : ",\n") << event;
    first_event = false;
  };

  for (std::size_t pid = 0; pid < chosen.size(); ++pid) {
    const std::string& kind = chosen[pid];
    std::vector<SeriesDataset> series;
    for (const std::string& m : metrics) {
      if (m.substr(0, m.find('/')) == kind) series.push_back(open_series(file, m));
    }
    const std::uint64_t count = series.front().components;
    for (const SeriesDataset& s : series) {
      if (s.components != count || s.samples != times.size())
        throw std::runtime_error("/series/" + kind + "/" + s.metric +
                                 " does not match /series/time and the kind's other series");
    }
    std::vector<std::uint64_t> ids = sel.components;
    if (ids.empty()) {
      for (std::uint64_t i = 0; i < std::min<std::uint64_t>(count, sel.max_components); ++i) ids.push_back(i);
    }
    if (!ids.empty() && ids.back() >= count) {
      throw std::invalid_argument("--components: id " + std::to_string(ids.back()) + " outside kind '" +
                                  kind + "' (" + std::to_string(count) + " components)");
    }
    const std::vector<std::string> names = component_names(file, kind, count);
    emit("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + std::to_string(pid + 1) +
         ",\"args\":{\"name\":" + json_string(kind) + "}}");
    for (const std::uint64_t id : ids) {
      std::vector<std::vector<double>> rows;
      for (const SeriesDataset& s : series) rows.push_back(read_rows(s, id, 1));
      const std::string track =
          names.empty() || names[id].empty() ? kind + " " + std::to_string(id) : names[id];
      for (std::size_t t = 0; t < times.size(); ++t) {
        std::string event = "{\"name\":" + json_string(track) +
                            ",\"ph\":\"C\",\"pid\":" + std::to_string(pid + 1) +
                            ",\"ts\":" + json_number(static_cast<double>(times[t]) / 1e6) + ",\"args\":{";
        for (std::size_t m = 0; m < series.size(); ++m) {
          if (m) event += ',';
          event += json_string(series[m].metric);
          event += ':';
          event += json_number(rows[m][t]);
        }
        emit(event + "}}");
        ++written;
      }
    }
  }
  out << "\n]}\n";
  out.close();
  if (!out) throw std::invalid_argument("--trace: writing '" + tmp + "' failed");
  if (std::rename(tmp.c_str(), json_path.c_str()) != 0)
    throw std::invalid_argument("--trace: renaming to '" + json_path + "': " + std::strerror(errno));
  return written;
}

}  // namespace

std::uint64_t export_trace(const std::string& h5_path, const std::string& json_path,
                           const TraceSelection& sel) {
  // A damaged file is one error naming it; the --trace write errors name the flag.
  return read_series_file(h5_path, [&] { return export_trace_of(h5_path, json_path, sel); });
}

}  // namespace warpsim::io
