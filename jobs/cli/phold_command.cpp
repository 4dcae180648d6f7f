// `warpsim phold` (see phold_command.hpp).
#include <CLI/CLI.hpp>

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <vector>

#include "engine/engine.hpp"
#include "io/key_value_report.hpp"
#include "jobs/cli/command_registry.hpp"
#include "jobs/cli/engine_options.hpp"
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
  EngineOptions engine;
};

void write_digests(const Engine& engine, const std::string& path, int rank, int ranks) {
  // Gathered to rank 0 only on request: this file is a test artefact and scales with the LP count.
  std::vector<std::uint64_t> flat;
  for (const auto& [lp, d] : engine.local_digests()) {
    flat.push_back(lp);
    flat.push_back(d);
  }
  int count = static_cast<int>(flat.size());
  std::vector<int> counts(ranks), displs(ranks);
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
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
              MPI_COMM_WORLD);
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

int run_phold(const PholdOptions& o, int rank, int ranks) {
  if (o.lps_per_rank < 1)
    throw UsageError("--lps-per-rank must be >= 1 (got " + std::to_string(o.lps_per_rank) + ")");
  if (o.start_events < 1)
    throw UsageError("--start-events must be >= 1 (got " + std::to_string(o.start_events) + ")");
  if (!(o.end_time > 0) || !std::isfinite(o.end_time)) throw UsageError("--end-time must be > 0");
  if (!(o.lookahead >= 0) || !std::isfinite(o.lookahead)) throw UsageError("--lookahead must be >= 0");
  if (!(o.mean > 0) || !std::isfinite(o.mean)) throw UsageError("--mean must be > 0");
  if (!(o.remote >= 0 && o.remote <= 1)) throw UsageError("--remote must be within [0, 1]");
  const double lps = static_cast<double>(o.lps_per_rank) * ranks;
  if (lps > 4294967295.0) throw UsageError("--lps-per-rank x ranks exceeds 2^32-1 LPs");
  const double end_ps = o.end_time * static_cast<double>(phold::kTimeUnit);
  if (end_ps >= 1.8e19) throw UsageError("--end-time too large for the engine's 64-bit picosecond clock");

  phold::PholdParams params;
  params.lp_count = static_cast<std::uint64_t>(o.lps_per_rank) * static_cast<std::uint64_t>(ranks);
  params.start_events = static_cast<std::uint32_t>(o.start_events);
  params.lookahead = o.lookahead;
  params.mean = o.mean;
  params.remote = o.remote;
  EngineConfig config = to_engine_config(o.engine, phold::to_engine_time(o.end_time), phold::kTimeUnit);
  if (config.sync == SyncMode::kConservative && o.lookahead <= 0) {
    throw UsageError("--sync conservative needs --lookahead > 0");
  }
  if (config.sync == SyncMode::kSequential && ranks != 1) {
    throw UsageError("--sync sequential runs on 1 rank (got " + std::to_string(ranks) + ")");
  }

  phold::PholdModel model(params);
  std::unique_ptr<LpMap> map;
  if (o.engine.partition == "round-robin") {
    map = std::make_unique<RoundRobinLpMap>(params.lp_count, ranks);
  } else {
    map = std::make_unique<BlockLpMap>(params.lp_count, ranks);
  }
  Engine engine(model, *map, config, MPI_COMM_WORLD);
  const RunResult r = engine.run();
  if (!o.digest_file.empty()) write_digests(engine, o.digest_file, rank, ranks);
  if (rank != 0) return 0;

  const EngineStats& t = r.total;
  io::KeyValueReport report;
  report.add("model", std::string("phold"));
  report.add("sync", std::string(to_string(config.sync)));
  report.add("ranks", static_cast<std::uint64_t>(r.ranks));
  report.add("lps", params.lp_count);
  report.add("events committed", t.committed);
  report.add("events processed", t.processed);
  report.add("events rolled back", t.rolled_back);
  report.add("rollbacks", t.rollbacks);
  const double efficiency =
      t.committed == 0
          ? 100.0
          : 100.0 * (1.0 - static_cast<double>(t.rolled_back) / static_cast<double>(t.committed));
  report.add("efficiency", efficiency, 2);
  report.add("event rate", r.wall_seconds > 0 ? static_cast<double>(t.committed) / r.wall_seconds : 0.0, 0);
  report.add("wall seconds", r.wall_seconds, 3);
  report.add("peak rss bytes", r.peak_rss_bytes_max);
  report.add("peak rss bytes total", r.peak_rss_bytes_sum);
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
  report.print(std::cout);
  return 0;
}

}  // namespace

std::function<int()> add_phold_command(CLI::App& app, const CommandEnv& env) {
  const int rank = env.rank;
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
  add_engine_options(*cmd, options->engine);
  return [options, cmd, rank, ranks]() -> int {
    if (!cmd->parsed()) return -1;
    return run_phold(*options, rank, ranks);
  };
}

const CommandRegistrar kRegisterPhold{"phold", add_phold_command};

}  // namespace warpsim::cli
