// The results file of `warpsim run` (see run_output.hpp).
#include "experiment/run_output.hpp"

#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "experiment/run_economics.hpp"
#include "experiment/setting_error.hpp"
#include "io/hdf5_series_writer.hpp"
#include "models/energy/power_series.hpp"

namespace warpsim::experiment {

namespace {

// Report keys that describe the run's cost or configuration, not the simulated result: they go to /meta,
// so that /summary compares equal between sync modes, rank counts and partitions. The same list as the
// volatile keys of tests/models/training/run_oracle.sh.
const std::set<std::string>& run_cost_keys() {
  static const std::set<std::string> keys = {"sync",
                                             "ranks",
                                             "partition",
                                             "events processed",
                                             "events rolled back",
                                             "efficiency",
                                             "rollbacks",
                                             "remote events",
                                             "remote event fraction",
                                             "event rate",
                                             "wall seconds",
                                             "peak rss bytes",
                                             "peak rss bytes total",
                                             "cpu share min",
                                             "simulated failure wall seconds"};
  return keys;
}

std::string dataset_name(const std::string& key) {
  std::string name = key;
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The unit of a report key, from its wording (keys carry their unit in their name).
std::string unit_of(const std::string& key) {
  if (key == "tokens per second") return "tokens/s";
  if (key.find("tflops per gpu") != std::string::npos) return "TFLOP/s";
  if (key.find("seconds") != std::string::npos) return "s";
  if (key == "mfu" || key == "hfu" || ends_with(key, "fraction")) return "fraction";
  if (key.find("bytes") != std::string::npos) return "bytes";
  if (key.find("events") != std::string::npos) return "events";
  if (key == "gpus" || key == "cluster gpus") return "GPUs";
  if (key == "lps") return "LPs";
  if (key == "steps") return "steps";
  if (key == "microbatches per step") return "microbatches";
  if (key == "checkpoints per step") return "checkpoints";
  return "";
}

// Rank 0's report rows on every rank (unit separator / record separator framing).
std::vector<io::KeyValueReport::Row> broadcast_rows(const io::KeyValueReport* report, MPI_Comm comm) {
  std::string wire;
  if (report != nullptr) {
    char number[40];
    for (const auto& row : report->rows()) {
      std::snprintf(number, sizeof number, "%.17g", row.number.value_or(0.0));
      wire += row.key + '\x1f' + row.text + '\x1f' + (row.number ? number : "") + '\x1e';
    }
  }
  int length = static_cast<int>(wire.size());
  MPI_Bcast(&length, 1, MPI_INT, 0, comm);
  wire.resize(static_cast<std::size_t>(length));
  if (length > 0) MPI_Bcast(wire.data(), length, MPI_CHAR, 0, comm);
  std::vector<io::KeyValueReport::Row> rows;
  std::size_t at = 0;
  while (at < wire.size()) {
    const std::size_t end = wire.find('\x1e', at);
    const std::string rec = wire.substr(at, end - at);
    const std::size_t a = rec.find('\x1f'), b = rec.find('\x1f', a + 1);
    io::KeyValueReport::Row row{rec.substr(0, a), rec.substr(a + 1, b - a - 1), {}};
    if (b + 1 < rec.size()) row.number = std::strtod(rec.c_str() + b + 1, nullptr);
    rows.push_back(std::move(row));
    at = end + 1;
  }
  return rows;
}

// The sum of every rank's (key, value) pairs, added in key order on every rank: the same bits for any
// partition and rank count (an MPI_SUM would add in rank order).
double total_in_key_order(const std::vector<std::pair<std::uint64_t, double>>& mine, MPI_Comm comm) {
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  int count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(ranks)), offsets(static_cast<std::size_t>(ranks), 0);
  MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  for (int r = 1; r < ranks; ++r) offsets[r] = offsets[r - 1] + counts[r - 1];
  const int all = offsets.back() + counts.back();
  std::vector<std::uint64_t> keys(mine.size()), all_keys(static_cast<std::size_t>(all));
  std::vector<double> values(mine.size()), all_values(static_cast<std::size_t>(all));
  for (std::size_t i = 0; i < mine.size(); ++i) std::tie(keys[i], values[i]) = mine[i];
  MPI_Allgatherv(keys.data(), count, MPI_UINT64_T, all_keys.data(), counts.data(), offsets.data(),
                 MPI_UINT64_T, comm);
  MPI_Allgatherv(values.data(), count, MPI_DOUBLE, all_values.data(), counts.data(), offsets.data(),
                 MPI_DOUBLE, comm);
  std::vector<std::size_t> order(all_keys.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return all_keys[a] < all_keys[b]; });
  double total = 0;
  for (std::size_t i : order) total += all_values[i];
  return total;
}

}  // namespace

SimTime automatic_interval_ps(double seconds) {
  // The estimate is compute-only, a lower bound of the simulated run (communication adds to it), so the
  // interval rounds up: at most 100 samples over the estimate, about 100 over a run that exposes some
  // communication. Rounding down gave 100-250 over the estimate and 2-3 times that over typical runs.
  const double target_ns = seconds * 1e9 / 100;
  if (!(target_ns >= 1) || !std::isfinite(target_ns)) return kPicosPerNano;
  const double decade = std::pow(10.0, std::floor(std::log10(target_ns)));
  double nice = 10 * decade;
  for (double m : {5.0, 2.0, 1.0}) {
    if (m * decade >= target_ns) nice = m * decade;
  }
  return static_cast<SimTime>(std::llround(nice)) * kPicosPerNano;
}

std::unique_ptr<RunOutput> RunOutput::prepare(const RunOutputOptions& o, const spec::ExperimentSpec& exp,
                                              const Setting<SimTime>& chosen, RunFacts facts,
                                              double estimate_seconds, SimTime end_time, MPI_Comm comm) {
  if (o.path.empty()) return nullptr;
  if (o.compression < 0 || o.compression > 9) throw SettingError("--compression must be within [0, 9]");
  if (o.layout != "single" && o.layout != "per-rank")
    throw SettingError("--output-layout must be 'single' or 'per-rank' (got '" + o.layout + "')");
  const bool automatic = chosen.value == 0;
  const std::string source = automatic ? "automatic" : chosen.source;
  const SimTime interval = automatic ? automatic_interval_ps(estimate_seconds) : chosen.value;
  // The grid grows with the run; refuse intervals that would make it absurdly long for this run.
  const double expected =
      estimate_seconds * static_cast<double>(kPicosPerSecond) / static_cast<double>(interval);
  if (expected > 1e6) {
    throw SettingError(source + ": about " + std::to_string(static_cast<std::uint64_t>(expected)) +
                       " samples per component for the estimated run; at most 1e6 (raise the interval)");
  }
  // Checked before the simulation so that a bad path costs nothing.
  try {
    io::check_output_path(o.path, o.overwrite, "--output", comm);
  } catch (const std::invalid_argument& e) {
    throw SettingError(e.what());
  }
  std::unique_ptr<RunOutput> out(new RunOutput(o, interval, end_time));
  out->automatic_ = automatic;
  google::protobuf::TextFormat::PrintToString(exp, &out->spec_text_);
  google::protobuf::util::JsonPrintOptions json;
  json.add_whitespace = true;
  json.preserve_proto_field_names = true;
  if (!google::protobuf::util::MessageToJsonString(exp, &out->spec_json_, json).ok())
    throw std::runtime_error("experiment spec: cannot print it as JSON");
  out->experiment_ = exp.name();
  if (exp.has_cost()) out->power_ = economics::power_params(exp);
  out->facts_ = std::move(facts);
  return out;
}

void RunOutput::write(io::KeyValueReport* report, MPI_Comm comm) {
  const auto start = std::chrono::steady_clock::now();
  // The grid ends after the last sample any rank recorded (the run's end is known only now).
  std::uint64_t used = std::max<std::uint64_t>(1, recorder_.used_samples());
  MPI_Allreduce(MPI_IN_PLACE, &used, 1, MPI_UINT64_T, MPI_MAX, comm);
  if (automatic_) {
    // The estimate that sized the interval can be far off (congestion, checkpoint stalls): widen it by
    // 2, 5, 10, 20, ... until the file holds at most kMaxAutomaticSamples samples per component.
    std::uint64_t factor = 1;
    for (std::uint64_t decade = 1; (used + factor - 1) / factor > kMaxAutomaticSamples; decade *= 10) {
      for (std::uint64_t m : {2, 5, 10}) {
        factor = m * decade;
        if ((used + factor - 1) / factor <= kMaxAutomaticSamples) break;
      }
    }
    recorder_.coarsen(factor);
    used = (used + factor - 1) / factor;
  }
  // The rows are made only if the power series need them: the writer reads the recording blocks.
  recorder_.finish(used * recorder_.interval(), /*make_rows=*/false);

  io::RunMetadata meta;
  meta.text = {{"model", "training"},
               {"experiment", experiment_},
               {"spec", spec_text_},
               {"spec_json", spec_json_},
               {"warpsim_version", io::warpsim_version()},
               {"git_revision", io::git_revision()},
               {"sync", facts_.sync},
               {"partition", facts_.partition}};
  meta.integers = {{"ranks", facts_.ranks}, {"seed", facts_.seed}};
  meta.reals = {{"sample_interval_ns", static_cast<double>(recorder_.interval()) / kPicosPerNano}};
  meta.result_groups = result_groups_;
  std::vector<io::SummaryValue> summary;
  std::set<std::string> meta_names;  // a report key that repeats a /meta attribute is not written twice
  for (const auto& kv : meta.text) meta_names.insert(kv.first);
  for (const auto& kv : meta.integers) meta_names.insert(kv.first);
  for (const auto& kv : meta.reals) meta_names.insert(kv.first);
  for (const auto& row : broadcast_rows(report, comm)) {
    const std::string name = dataset_name(row.key);
    if (run_cost_keys().count(row.key) != 0 || !row.number) {
      // Run cost and text (job, cluster, gpu, state digest): descriptive, /meta.
      if (!meta_names.insert(name).second) continue;
      if (row.number) {
        meta.reals.emplace_back(name, *row.number);
      } else {
        meta.text.emplace_back(name, row.text);
      }
      continue;
    }
    summary.push_back({name, *row.number, unit_of(row.key)});
  }
  if (power_) {
    const energy::PowerSeriesTotals local = energy::add_power_series(recorder_, *power_);
    const double joules = total_in_key_order(local.component_joules, comm);
    std::uint64_t nodes = local.nodes;
    MPI_Allreduce(MPI_IN_PLACE, &nodes, 1, MPI_UINT64_T, MPI_MAX, comm);
    // Hosts have no component series: their static power over the grid.
    const double seconds = static_cast<double>(recorder_.end_time()) / static_cast<double>(kPicosPerSecond);
    const double host = power_->node_static_w * static_cast<double>(nodes) * seconds;
    summary.push_back({"energy_host_j", host, "J"});
    summary.push_back({"energy_series_j", joules + host, "J"});
    summary.push_back({"energy_grid_seconds", seconds, "s"});
  }
  io::SeriesFileOptions file_options;
  file_options.deflate_level = options_.compression;
  file_options.layout =
      options_.layout == "per-rank" ? io::SeriesLayout::kPerRank : io::SeriesLayout::kSingleFile;
  io::write_series_file(options_.path, recorder_, meta, summary, comm, file_options);
  if (report == nullptr) return;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report->add("output file", options_.path);
  // The per-rank layout's rank files hold the series: count them too.
  std::uint64_t bytes = std::filesystem::file_size(options_.path);
  const std::filesystem::path ranks_dir = io::rank_directory(options_.path);
  if (std::filesystem::is_directory(ranks_dir)) {
    for (const auto& entry : std::filesystem::directory_iterator(ranks_dir))
      if (entry.is_regular_file()) bytes += entry.file_size();
  }
  report->add("output bytes", bytes);
  report->add("output samples", recorder_.sample_count());
  report->add("output sample interval ns", static_cast<double>(recorder_.interval()) / kPicosPerNano, 3);
  report->add("output seconds", seconds, 3);
}

}  // namespace warpsim::experiment
