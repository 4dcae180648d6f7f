// `warpsim phold` (see phold_command.hpp).
#include <CLI/CLI.hpp>

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <vector>

#include "engine/kernel/engine.hpp"
#include "engine/series_recorder.hpp"
#include "io/hdf5_series_writer.hpp"
#include "io/key_value_report.hpp"
#include "jobs/cli/command_registry.hpp"
#include "jobs/cli/engine_options.hpp"
#include "jobs/cli/simulating_ranks.hpp"
#include "jobs/cli/usage_error.hpp"
#include "models/phold/phold_model.hpp"
#include "partition/block_map.hpp"

namespace warpsim::cli {

namespace {

struct PholdOptions {
  std::int64_t lps_per_rank = 2048;
  std::int64_t start_events = 1;
  double lookahead = 1.0;
  double mean = 1.0;
  double remote = 0.25;
  double end_time = 10000;
  std::string digest_file;
  std::string output;            // HDF5 series file; empty = no series
  double sample_interval = 100;  // time units
  bool overwrite = false;
  int compression = io::SeriesFileOptions{}.deflate_level;  // deflate level of the series datasets
  EngineOptions engine;
  CheckpointOptions checkpoint;
};

// The run's parameters as JSON for /meta/spec (rank-count independent: total LPs, not LPs per rank).
std::string spec_json(const phold::PholdParams& p, const PholdOptions& o) {
  std::ostringstream j;
  j.precision(17);
  j << "{\"model\": \"phold\", \"lp_count\": " << p.lp_count << ", \"start_events\": " << p.start_events
    << ", \"lookahead\": " << p.lookahead << ", \"mean\": " << p.mean << ", \"remote\": " << p.remote
    << ", \"end_time\": " << o.end_time << ", \"sample_interval\": " << o.sample_interval
    << ", \"seed\": " << o.engine.seed << ", \"time_unit\": \"us\"}";
  return j.str();
}

void write_series(MPI_Comm comm, const PholdOptions& o, const phold::PholdParams& params,
                  const EngineConfig& config, const RunResult& r, SeriesRecorder& recorder) {
  recorder.finish();
  const double unit = static_cast<double>(phold::kTimeUnit);
  io::RunMetadata meta;
  meta.text = {{"model", "phold"},
               {"spec", spec_json(params, o)},
               {"warpsim_version", io::warpsim_version()},
               {"git_revision", io::git_revision()},
               {"sync", std::string(to_string(config.sync))},
               {"partition", o.engine.partition}};
  meta.integers = {{"ranks", r.ranks},
                   {"seed", o.engine.seed},
                   {"events_rolled_back", static_cast<std::int64_t>(r.total.rolled_back)},
                   {"events_processed", static_cast<std::int64_t>(r.total.processed)}};
  meta.reals = {{"wall_seconds", r.wall_seconds}};
  const auto committed = static_cast<double>(r.total.committed);
  const std::vector<io::SummaryValue> summary = {
      {"events_committed", committed, "events"},
      {"lp_count", static_cast<double>(params.lp_count), "lps"},
      {"end_time_us", static_cast<double>(config.end_time) / unit, "us"},
      {"sample_interval_us", static_cast<double>(recorder.interval()) / unit, "us"},
      {"events_per_lp", committed / static_cast<double>(params.lp_count), "events"},
      {"event_rate_simulated", committed / (static_cast<double>(config.end_time) / unit), "events/us"}};
  io::SeriesFileOptions file_options;
  file_options.deflate_level = o.compression;
  io::write_series_file(o.output, recorder, meta, summary, comm, file_options);
}

void write_digests(const Engine& engine, const std::string& path, int rank, int ranks, MPI_Comm comm) {
  // Gathered to rank 0 only on request: this file is a test artefact and scales with the LP count.
  std::vector<std::uint64_t> flat;
  for (const auto& [lp, d] : engine.local_digests()) {
    flat.push_back(lp);
    flat.push_back(d);
  }
  int count = static_cast<int>(flat.size());
  std::vector<int> counts(ranks), displs(ranks);
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
  std::vector<std::uint64_t> all;
  if (rank == 0) {
    int total = 0;
    for (int r = 0; r < ranks; ++r) {
      displs[r] = total;
      total += counts[r];
    }
    all.resize(total);
  }
  MPI_Gatherv(flat.data(), count, MPI_UINT64_T, all.data(), counts.data(), displs.data(), MPI_UINT64_T, 0,
              comm);
  if (rank != 0) return;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> rows;
  for (std::size_t i = 0; i < all.size(); i += 2) rows.emplace_back(all[i], all[i + 1]);
  std::sort(rows.begin(), rows.end());
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    if (!out) throw UsageError("--digest-file: cannot write '" + path + "'");
    for (const auto& [lp, d] : rows) out << lp << ' ' << std::hex << d << std::dec << '\n';
    if (!out) throw UsageError("--digest-file: write to '" + path + "' failed");
  }
  std::rename(tmp.c_str(), path.c_str());
}

// `model_ranks` (the world's size) sets the LP count, `comm` the ranks that simulate them (fewer on a shared
// node: simulating_ranks.hpp).
int run_phold(const PholdOptions& o, int model_ranks, MPI_Comm comm) {
  int rank = 0;
  int ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  if (o.lps_per_rank < 1)
    throw UsageError("--lps-per-rank must be >= 1 (got " + std::to_string(o.lps_per_rank) + ")");
  if (o.start_events < 1)
    throw UsageError("--start-events must be >= 1 (got " + std::to_string(o.start_events) + ")");
  if (!(o.end_time > 0) || !std::isfinite(o.end_time)) throw UsageError("--end-time must be > 0");
  if (!(o.lookahead >= 0) || !std::isfinite(o.lookahead)) throw UsageError("--lookahead must be >= 0");
  if (!(o.mean > 0) || !std::isfinite(o.mean)) throw UsageError("--mean must be > 0");
  if (!(o.remote >= 0 && o.remote <= 1)) throw UsageError("--remote must be within [0, 1]");
  const double lps = static_cast<double>(o.lps_per_rank) * model_ranks;
  if (lps > 4294967295.0) throw UsageError("--lps-per-rank x ranks exceeds 2^32-1 LPs");
  const double end_ps = o.end_time * static_cast<double>(phold::kTimeUnit);
  if (end_ps >= 1.8e19) throw UsageError("--end-time too large for the engine's 64-bit picosecond clock");

  phold::PholdParams params;
  params.lp_count = static_cast<std::uint64_t>(o.lps_per_rank) * static_cast<std::uint64_t>(model_ranks);
  params.start_events = static_cast<std::uint32_t>(o.start_events);
  params.lookahead = o.lookahead;
  params.mean = o.mean;
  params.remote = o.remote;
  EngineConfig config =
      to_engine_config(o.engine, phold::to_engine_time(o.end_time), phold::kTimeUnit, ranks);
  if (config.sync == SyncMode::kConservative && o.lookahead <= 0) {
    throw UsageError("--sync conservative needs --lookahead > 0");
  }
  if (o.compression < 0 || o.compression > 9) throw UsageError("--compression must be within [0, 9]");
  std::unique_ptr<SeriesRecorder> recorder;
  if (!o.output.empty()) {
    if (!(o.sample_interval > 0) || !std::isfinite(o.sample_interval)) {
      std::ostringstream got;
      got << o.sample_interval;
      throw UsageError("--sample-interval must be > 0 (got " + got.str() + ")");
    }
    const SimTime interval = phold::to_engine_time(o.sample_interval);
    if (interval == 0) throw UsageError("--sample-interval is below one picosecond");
    if (o.sample_interval * 1e8 < o.end_time)
      throw UsageError("--sample-interval gives more than 1e8 samples per LP");
    // Checked before the simulation so that a bad path costs nothing.
    io::check_output_path(o.output, o.overwrite, "--output", comm);
    recorder = std::make_unique<SeriesRecorder>(interval, config.end_time);
  }

  apply_checkpoint_options(o.checkpoint, "--checkpoint-at", phold::kTimeUnit, config);
  if (config.checkpoint.writes() || !config.checkpoint.resume.empty()) {
    // The engine checks LP count, seed, end time and partition; the model's other parameters are here.
    auto& id = config.checkpoint.identity;
    std::ostringstream model_params;
    model_params.precision(17);
    model_params << "start_events=" << params.start_events << " lookahead=" << params.lookahead
                 << " mean=" << params.mean << " remote=" << params.remote;
    id.emplace_back("phold", model_params.str());
    id.emplace_back("series interval ps",
                    recorder ? std::to_string(recorder->interval()) : std::string("none"));
    if (recorder) {
      SeriesRecorder& rec = *recorder;
      config.checkpoint.save_extra = [&rec](std::ostream& out) { rec.save(out); };
      config.checkpoint.load_extra = [&rec](std::istream& in) { rec.load(in); };
    }
  }
  phold::PholdModel model(params, recorder.get());
  std::unique_ptr<LpMap> map;
  if (o.engine.partition == "round-robin") {
    map = std::make_unique<RoundRobinLpMap>(params.lp_count, ranks);
  } else {
    map = std::make_unique<BlockLpMap>(params.lp_count, ranks);
  }
  Engine engine(model, *map, config, comm);
  const RunResult r = engine.run();
  if (r.stopped_at_checkpoint) {
    if (rank == 0) {
      std::cout << "checkpoint: " << r.checkpoint_path << "\n"
                << "checkpoint time: "
                << static_cast<double>(r.checkpoint_time) / static_cast<double>(phold::kTimeUnit) << "\n"
                << "stopped: resume with --resume " << o.checkpoint.dir << "\n";
    }
    return kCheckpointStopExitCode;
  }
  if (!o.digest_file.empty()) write_digests(engine, o.digest_file, rank, ranks, comm);
  double output_seconds = 0;
  if (recorder) {
    const auto start = std::chrono::steady_clock::now();
    write_series(comm, o, params, config, r, *recorder);
    output_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  if (rank != 0) return 0;

  const EngineStats& t = r.total;
  io::KeyValueReport report;
  report.add("model", std::string("phold"));
  report.add("sync", std::string(to_string(config.sync)));
  report.add("ranks", static_cast<std::uint64_t>(r.ranks));
  report.add("lps", params.lp_count);
  add_engine_report(report, r);
  report.add("rollbacks", t.rollbacks);
  report.add("remote events", t.remote_sent);
  report.add("anti-messages", t.anti_sent);
  report.add("gvt rounds", t.gvt_rounds);
  report.add("mpi messages", t.mpi_messages);
  report.add("peak uncommitted events", t.peak_uncommitted);
  report.add("peak live events per rank", t.peak_events);
  report.add("bytes per event", t.event_bytes);
  report.add("bytes per lp", t.lp_bytes + (t.local_lps ? t.model_state_bytes / t.local_lps : 0));
  char digest[32];
  std::snprintf(digest, sizeof digest, "%016llx", static_cast<unsigned long long>(r.state_digest));
  report.add("state digest", std::string(digest));
  if (recorder) {
    report.add("output file", o.output);
    report.add("output bytes", static_cast<std::uint64_t>(std::filesystem::file_size(o.output)));
    report.add("output samples", recorder->sample_count());
    report.add("output seconds", output_seconds, 3);
  }
  report.print(std::cout);
  return 0;
}

}  // namespace

std::function<int()> add_phold_command(CLI::App& app, const CommandEnv& env) {
  const int ranks = env.ranks;
  auto options = std::make_shared<PholdOptions>();
  CLI::App* cmd =
      app.add_subcommand("phold", "PHOLD benchmark on the Time Warp engine (ROSS-compatible semantics)");
  cmd->add_option("--lps-per-rank", options->lps_per_rank, "LPs on each rank (total = this x ranks)")
      ->capture_default_str();
  cmd->add_option("--start-events", options->start_events, "initial events per LP")->capture_default_str();
  cmd->add_option("--lookahead", options->lookahead, "minimum delay of every event, time units")
      ->capture_default_str();
  cmd->add_option("--mean", options->mean, "mean of the exponential extra delay, time units")
      ->capture_default_str();
  cmd->add_option("--remote", options->remote, "probability that an event goes to a uniformly random LP")
      ->capture_default_str();
  cmd->add_option("--end-time", options->end_time, "simulated end time, time units (1 unit = 1 us)")
      ->capture_default_str();
  cmd->add_option("--digest-file", options->digest_file, "write every LP's final state digest (lp hex) here");
  CLI::Option* output = cmd->add_option("--output", options->output,
                                        "write per-LP time series to this HDF5 file (docs/hdf5-layout.md)");
  cmd->add_option("--sample-interval", options->sample_interval, "series sample interval, time units")
      ->capture_default_str()
      ->needs(output);
  cmd->add_flag("--overwrite", options->overwrite, "replace an existing --output file")->needs(output);
  cmd->add_option("--compression", options->compression,
                  "deflate level 0-9 of the series datasets (0 = uncompressed)")
      ->capture_default_str()
      ->needs(output);
  add_engine_options(*cmd, options->engine);
  add_checkpoint_options(*cmd, options->checkpoint, "--checkpoint-at");
  return [options, cmd, ranks]() -> int {
    if (!cmd->parsed()) return -1;
    const bool checkpoints = !options->checkpoint.dir.empty() || !options->checkpoint.resume.empty();
    return on_simulating_ranks(options->engine, checkpoints,
                               [&](MPI_Comm comm) { return run_phold(*options, ranks, comm); });
  };
}

const CommandRegistrar kRegisterPhold{"phold", add_phold_command};

}  // namespace warpsim::cli
