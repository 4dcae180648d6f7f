// SeriesRecorder::save/load: the recorder's part of a simulation checkpoint (see series_recorder.hpp).
// The stream is binary in the host's byte order (a checkpoint is restarted on the same kind of machine) and
// logical: per component and sample, so it does not depend on how the grid is laid out in memory.
#include <algorithm>
#include <array>
#include <cstring>
#include <istream>
#include <ostream>
#include <stdexcept>
#include <type_traits>

#include "engine/series_recorder.hpp"

namespace warpsim {

namespace {

constexpr std::array<char, 8> kMagic = {'W', 'S', 'S', 'E', 'R', 'I', 'E', 'S'};
constexpr std::array<char, 8> kTrailer = {'W', 'S', 'S', 'R', '-', 'E', 'N', 'D'};
constexpr std::uint32_t kVersion = 1;

class Writer {
 public:
  explicit Writer(std::ostream& out) : out_(out) {}
  template <typename T>
  void put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.write(reinterpret_cast<const char*>(&value), sizeof(T));
  }
  template <typename T>
  void put_all(const T* values, std::size_t count) {
    out_.write(reinterpret_cast<const char*>(values), static_cast<std::streamsize>(count * sizeof(T)));
  }
  void put_string(const std::string& s) {
    put<std::uint64_t>(s.size());
    out_.write(s.data(), static_cast<std::streamsize>(s.size()));
  }

 private:
  std::ostream& out_;
};

class Reader {
 public:
  explicit Reader(std::istream& in) : in_(in) {}
  template <typename T>
  T get(const char* what) {
    static_assert(std::is_trivially_copyable_v<T>);
    T value;
    read(reinterpret_cast<char*>(&value), sizeof(T), what);
    return value;
  }
  // Reads in pieces, so a corrupt count fails on the stream's end instead of one huge allocation.
  template <typename T>
  void get_all(std::vector<T>& into, std::uint64_t count, const char* what) {
    constexpr std::uint64_t kPiece = 1 << 16;
    into.clear();
    for (std::uint64_t done = 0; done < count;) {
      const std::uint64_t n = std::min(kPiece, count - done);
      into.resize(static_cast<std::size_t>(done + n));
      read(reinterpret_cast<char*>(into.data() + done), static_cast<std::size_t>(n * sizeof(T)), what);
      done += n;
    }
  }
  std::string get_string(const char* what) {
    const auto size = get<std::uint64_t>(what);
    if (size > (1u << 20)) fail(std::string(what) + " has an impossible length");
    std::string s(size, '\0');
    read(s.data(), s.size(), what);
    return s;
  }
  [[noreturn]] static void fail(const std::string& message) {
    throw std::runtime_error("series checkpoint: " + message);
  }

 private:
  void read(char* to, std::size_t bytes, const char* what) {
    if (!in_.read(to, static_cast<std::streamsize>(bytes)) ||
        in_.gcount() != static_cast<std::streamsize>(bytes))
      fail(std::string("truncated while reading ") + what);
  }
  std::istream& in_;
};

std::uint64_t samples_for(SimTime end, SimTime interval) {
  return end / interval + (end % interval != 0 ? 1 : 0);
}

}  // namespace

void SeriesRecorder::save(std::ostream& out) const {
  Writer w(out);
  w.put(kMagic);
  w.put(kVersion);
  w.put<std::uint64_t>(interval_);
  w.put<std::uint64_t>(end_time_);
  w.put<std::uint64_t>(samples_);
  w.put<std::uint64_t>(finished_ ? samples_ : capacity_);  // finished: the rows' length, made or not
  w.put<std::uint64_t>(used_);
  w.put<std::uint8_t>(finished_ ? 1 : 0);
  w.put<std::uint32_t>(static_cast<std::uint32_t>(kinds_.size()));
  for (const Kind& kind : kinds_) {
    w.put_string(kind.name);
    w.put<std::uint64_t>(kind.component_count);
    w.put<std::uint32_t>(static_cast<std::uint32_t>(kind.metrics.size()));
    w.put<std::uint64_t>(kind.ids.size());
    w.put_all(kind.ids.data(), kind.ids.size());
    // The records' words, without the padding to whole lines.
    for (std::uint32_t local = 0; local < kind.ids.size(); ++local)
      w.put_all(kind.record(local), 2 + kind.metrics.size());
    for (const auto& levels : kind.levels) {
      w.put<std::uint64_t>(levels.size());
      for (const Kind::Level& lv : levels) {
        w.put(lv.level);
        w.put<std::uint64_t>(lv.since);
      }
    }
    if (finished_) {
      // Per metric, the rows (made now if they are not: the same values as make_rows() would give).
      std::vector<double> row(samples_);
      for (std::uint32_t m = 0; m < kind.metrics.size(); ++m) {
        for (std::uint32_t local = 0; local < kind.ids.size(); ++local) {
          copy_samples(static_cast<KindId>(&kind - kinds_.data()), m, local, 0, samples_, row.data());
          w.put_all(row.data(), row.size());
        }
      }
    } else {
      for (std::uint32_t local = 0; local < kind.ids.size(); ++local)
        for (std::uint64_t s = 0; s < capacity_; ++s) w.put_all(cell(kind, local, s), kind.metrics.size());
    }
  }
  w.put(kTrailer);
  if (!out) throw std::runtime_error("series checkpoint: writing failed");
}

void SeriesRecorder::load(std::istream& in) {
  Reader r(in);
  if (r.get<std::array<char, 8>>("the header") != kMagic) Reader::fail("not a series checkpoint (bad magic)");
  if (const auto version = r.get<std::uint32_t>("the version"); version != kVersion)
    Reader::fail("version " + std::to_string(version) + " is not the supported " + std::to_string(kVersion));
  const auto interval = r.get<std::uint64_t>("the interval");
  const auto end_time = r.get<std::uint64_t>("the end time");
  const auto samples = r.get<std::uint64_t>("the sample count");
  const auto capacity = r.get<std::uint64_t>("the capacity");
  const auto used = r.get<std::uint64_t>("the used sample count");
  const auto finished = r.get<std::uint8_t>("the finished flag");
  if (interval == 0 || end_time == 0 || samples != samples_for(end_time, interval) || capacity > samples ||
      (finished == 0 && used > samples) || finished > 1 || (finished == 1 && capacity != samples))
    Reader::fail("inconsistent grid (interval " + std::to_string(interval) + " ps, end " +
                 std::to_string(end_time) + " ps, " + std::to_string(samples) + " samples)");
  if (const auto count = r.get<std::uint32_t>("the kind count"); count != kinds_.size())
    Reader::fail(std::to_string(count) + " kinds saved, " + std::to_string(kinds_.size()) + " declared");

  // Everything is read into `restored` first, so a failure leaves this recorder as it was.
  struct Restored {
    std::vector<AccumulatorLine> accumulators;
    std::vector<std::vector<Kind::Level>> levels;
    std::vector<std::vector<double>> values;  // finished: per metric; otherwise one [local][s][metric]
  };
  std::vector<Restored> restored(kinds_.size());
  for (std::size_t k = 0; k < kinds_.size(); ++k) {
    const Kind& kind = kinds_[k];
    Restored& into = restored[k];
    const std::string name = r.get_string("a kind name");
    if (name != kind.name)
      Reader::fail("kind " + std::to_string(k) + " is '" + name + "', declared '" + kind.name + "'");
    const std::string where = "kind '" + name + "': ";
    const auto component_count = r.get<std::uint64_t>("a component count");
    const auto metric_count = r.get<std::uint32_t>("a metric count");
    const auto local_count = r.get<std::uint64_t>("a local component count");
    if (component_count != kind.component_count || metric_count != kind.metrics.size() ||
        local_count != kind.ids.size())
      Reader::fail(where + "saved " + std::to_string(component_count) + " components, " +
                   std::to_string(metric_count) + " metrics, " + std::to_string(local_count) +
                   " local; declared " + std::to_string(kind.component_count) + ", " +
                   std::to_string(kind.metrics.size()) + ", " + std::to_string(kind.ids.size()));
    std::vector<std::uint64_t> ids;
    r.get_all(ids, local_count, "component ids");
    if (ids != kind.ids) Reader::fail(where + "the local component ids differ from the registered ones");
    std::vector<std::uint64_t> words;
    r.get_all(words, local_count * (2 + metric_count), "current samples");
    into.accumulators.assign(local_count * kind.stride / kLineWords, AccumulatorLine{});
    for (std::uint64_t local = 0; local < local_count; ++local) {
      std::copy_n(words.data() + local * (2 + metric_count), 2 + metric_count,
                  reinterpret_cast<std::uint64_t*>(into.accumulators.data()) + local * kind.stride);
    }
    into.levels.resize(metric_count);
    for (std::uint32_t m = 0; m < metric_count; ++m) {
      const auto n = r.get<std::uint64_t>("a level count");
      if (n != kind.levels[m].size())
        Reader::fail(where + "level count of metric '" + kind.metrics[m].name + "' differs");
      for (std::uint64_t i = 0; i < n; ++i) {
        const auto level = r.get<double>("a level");
        into.levels[m].push_back(Kind::Level{level, r.get<std::uint64_t>("a level time")});
      }
    }
    if (finished == 1) {
      into.values.resize(metric_count);
      for (auto& values : into.values) r.get_all(values, local_count * samples, "sample values");
    } else {
      into.values.resize(1);
      r.get_all(into.values[0], local_count * capacity * metric_count, "grid values");
    }
  }
  if (r.get<std::array<char, 8>>("the trailer") != kTrailer) Reader::fail("bad trailer (corrupt data)");

  interval_ = interval;
  end_time_ = end_time;
  samples_ = samples;
  used_ = used;
  finished_ = finished == 1;
  rows_made_ = finished_;
  allocate_grid(finished_ ? 0 : capacity);
  capacity_ = capacity;
  for (std::size_t k = 0; k < kinds_.size(); ++k) {
    Kind& kind = kinds_[k];
    kind.accumulators = std::move(restored[k].accumulators);
    kind.levels = std::move(restored[k].levels);
    if (finished_) {
      kind.values.clear();
      for (const std::vector<double>& values : restored[k].values) {
        kind.values.emplace_back(values.size());
        std::copy(values.begin(), values.end(), kind.values.back().data());
      }
      continue;
    }
    kind.values.clear();
    kind.values.resize(kind.metrics.size());
    const std::size_t m = kind.metrics.size();
    const double* from = restored[k].values[0].data();
    for (std::uint32_t local = 0; local < kind.ids.size(); ++local)
      for (std::uint64_t s = 0; s < capacity_; ++s, from += m) std::copy_n(from, m, cell(kind, local, s));
  }
}

}  // namespace warpsim
