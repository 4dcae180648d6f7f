// `warpsim collective`: an nccl-tests-like sweep on a simulated cluster. For each message size it runs
// the packet-level cluster model with one collective over a GPU group and prints one row: bytes, simulated
// time, algorithm bandwidth, bus bandwidth, committed events and the state digest (identical for every
// sync mode and rank count).
#include <CLI/CLI.hpp>

#include <mpi.h>

#include <cctype>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/kernel/engine.hpp"
#include "experiment/byte_count.hpp"
#include "experiment/fidelity.hpp"
#include "experiment/spec/cluster_spec.hpp"
#include "experiment/spec/experiment_spec.hpp"
#include "jobs/cli/command_registry.hpp"
#include "jobs/cli/engine_options.hpp"
#include "jobs/cli/simulating_ranks.hpp"
#include "jobs/cli/usage_error.hpp"
#include "models/cluster/cluster_model.hpp"
#include "models/cluster/collective_algorithms.hpp"
#include "models/cluster/collectives.hpp"
#include "models/cluster/nccl_tuning.hpp"
#include "models/cluster/ring_order.hpp"
#include "partition/block_map.hpp"

namespace warpsim::cli {

namespace {

struct CollectiveOptions {
  std::string cluster;
  std::string op = "allreduce";
  std::string algo = "ring";
  std::int64_t gpus = 0;  // 0 = every GPU of the cluster
  std::int64_t first = 0;
  std::int64_t stride = 1;
  std::string min_bytes = "1KiB";
  std::string max_bytes = "64MiB";
  std::int64_t step_factor = 2;
  std::string chunk_bytes = "1MiB";
  std::string fidelity;           // "" = the cluster spec's network.fidelity
  std::int64_t local_gpus = 0;    // hierarchical: group ranks per node; 0 = from the cluster and --stride
  std::int64_t channels = 0;      // ring: rings the buffer is split over; 0 = one per rail
  std::string protocol = "auto";  // NCCL protocol cost: auto | ll | ll128 | simple | none
  bool verbose = false;           // the run cost of every size, not only the total
  EngineOptions engine;
};

std::uint64_t parse_bytes(const std::string& text, const std::string& flag) {
  return experiment::parse_byte_count(text, flag, 1ull << 40, "1 TiB");
}

std::string hex(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// On the ranks that simulate (`comm`: fewer than started on a busy node, simulating_ranks.hpp).
int run_collective(const CollectiveOptions& o, MPI_Comm comm) {
  int rank = 0;
  int ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  if (o.cluster.empty()) throw UsageError("--cluster is required");
  const spec::ClusterSpec cluster_spec = [&] {
    try {
      return spec::load_cluster_of_spec(o.cluster);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--cluster: ") + e.what());
    }
  }();
  cluster::ClusterParams params = spec::to_cluster_params(cluster_spec);
  // --fidelity overrides the cluster's network.fidelity (the one rule: experiment/fidelity.hpp).
  const auto fidelity = experiment::resolve_fidelity(o.fidelity, {}, cluster_spec.network().fidelity());
  if (!fidelity.error_field.empty()) throw UsageError(fidelity.error_field + ": " + fidelity.error);
  params.fidelity = fidelity.fidelity;
  const auto collective = cluster::parse_collective(o.op);
  if (!collective) {
    throw UsageError("--op: unknown collective '" + o.op +
                     "' (allreduce, allgather, reducescatter, alltoall, broadcast)");
  }
  // "auto": NCCL's choice between the ring and the tree for each size (all-reduce only); the ring stands in
  // for the checks below.
  const bool auto_algorithm = o.algo == "auto";
  if (auto_algorithm && *collective != cluster::Collective::kAllReduce) {
    throw UsageError("--algorithm: auto chooses between the ring and the tree of an all-reduce; --op " +
                     o.op + " needs ring, tree or hierarchical");
  }
  const cluster::CollectiveAlgorithm* algorithm =
      cluster::find_collective_algorithm(auto_algorithm ? "ring" : o.algo);
  if (algorithm == nullptr) {
    throw UsageError("--algorithm: unknown algorithm '" + o.algo + "' (auto, " +
                     cluster::collective_algorithm_names() + ")");
  }
  if (!algorithm->implements(*collective)) {
    throw UsageError("--algorithm: " + o.algo + " does not implement --op " + o.op + " (" + o.algo +
                     " implements " + cluster::supported_collectives(algorithm->id) + ")");
  }
  const std::uint64_t cluster_gpus = std::uint64_t{params.nodes} * params.gpus_per_node;
  if (o.first < 0 || static_cast<std::uint64_t>(o.first) >= cluster_gpus) {
    throw UsageError("--first must be within [0, " + std::to_string(cluster_gpus) + ")");
  }
  if (o.stride < 1) throw UsageError("--stride must be >= 1 (got " + std::to_string(o.stride) + ")");
  if (o.gpus < 0) throw UsageError("--gpus must be >= 1 (got " + std::to_string(o.gpus) + ")");
  cluster::GpuGroup group;
  group.first = static_cast<std::uint32_t>(o.first);
  group.stride = static_cast<std::uint32_t>(o.stride);
  const std::uint64_t count = o.gpus == 0 ? (cluster_gpus - group.first + group.stride - 1) / group.stride
                                          : static_cast<std::uint64_t>(o.gpus);
  if (count > 65535) throw UsageError("--gpus: at most 65535");
  group.count = static_cast<std::uint32_t>(count);
  if (group.last_gpu() >= cluster_gpus) {
    throw UsageError("--gpus: the group ends at GPU " + std::to_string(group.last_gpu()) +
                     " but the cluster has " + std::to_string(cluster_gpus) + " GPUs");
  }
  if (o.local_gpus < 0)
    throw UsageError("--local-gpus must be >= 1 (got " + std::to_string(o.local_gpus) + ")");
  // Group ranks per node: a node's GPUs that the stride keeps (when it divides the node evenly).
  std::uint64_t local = static_cast<std::uint64_t>(o.local_gpus);
  if (local == 0) {
    local = params.gpus_per_node % group.stride == 0 ? params.gpus_per_node / group.stride : 1;
    if (group.count % local != 0) local = 1;
  }
  if (algorithm->node_local_groups && group.count % local != 0) {
    throw UsageError("--local-gpus: " + std::to_string(local) + " does not divide the group's " +
                     std::to_string(group.count) + " GPUs");
  }
  const std::uint64_t min_bytes = parse_bytes(o.min_bytes, "--min-bytes");
  const std::uint64_t max_bytes = parse_bytes(o.max_bytes, "--max-bytes");
  const std::uint64_t chunk_bytes = parse_bytes(o.chunk_bytes, "--chunk-bytes");
  // 0 bytes would be one meaningless row (the sweep cannot grow from 0).
  if (min_bytes == 0) throw UsageError("--min-bytes must be > 0 (got '" + o.min_bytes + "')");
  if (min_bytes > max_bytes)
    throw UsageError("--min-bytes (" + o.min_bytes + ") must not exceed --max-bytes (" + o.max_bytes + ")");
  if (chunk_bytes == 0) throw UsageError("--chunk-bytes must be > 0");
  const bool nccl_cost = o.protocol != "none";
  std::optional<cluster::Protocol> protocol;
  if (o.protocol != "auto" && nccl_cost) {
    protocol = cluster::parse_protocol(o.protocol);
    if (!protocol)
      throw UsageError("--protocol: unknown protocol '" + o.protocol + "' (auto, ll, ll128, simple, none)");
  }
  if (o.channels < 0 || o.channels > 64)
    throw UsageError("--channels must be within [0, 64] (got " + std::to_string(o.channels) + ")");
  if (o.step_factor < 2)
    throw UsageError("--step-factor must be >= 2 (got " + std::to_string(o.step_factor) + ")");
  // About 11.5 simulated days: far beyond any collective, far from the clock's end.
  constexpr SimTime kEnd = SimTime{1'000'000'000} * kPicosPerSecond;
  const EngineConfig config = to_engine_config(o.engine, kEnd, kPicosPerNano, ranks);

  // The ring's channels without NCCL's reduction for small messages: --channels, else one per rail.
  const std::uint32_t rail_channels =
      cluster::RailRings(group.count, group.count % local == 0 ? static_cast<std::uint32_t>(local) : 1,
                         static_cast<std::uint32_t>(o.channels))
          .channels();
  if (rank == 0) {
    std::cout << "# warpsim collective: " << to_string(*collective) << " " << o.algo
              << (auto_algorithm ? " (NCCL's ring or tree per size)" : "") << ", " << group.count
              << " GPUs (first " << group.first << ", stride " << group.stride << ") of " << cluster_gpus
              << ", cluster " << o.cluster << ", "
              << (params.fidelity == cluster::Fidelity::kFlow ? "flow" : "packet") << " fidelity, ";
    if (algorithm->id == cluster::Algorithm::kRing) {
      std::cout << (o.channels == 0 && nccl_cost ? "up to " : "") << rail_channels << " channel"
                << (rail_channels == 1 ? "" : "s") << ", ";
    }
    std::cout << "sync " << to_string(config.sync) << ", ranks " << ranks << "\n";
    std::printf("# %14s %14s %12s %12s %12s %18s\n", "bytes", "time_us", "algbw_GBps", "busbw_GBps", "events",
                "digest");
  }
  // Run cost varies between runs, the rows do not: it goes on comment lines after the table, so the rows
  // stay contiguous like nccl-tests' (one total line; per size with --verbose).
  std::vector<std::string> cost_lines;
  double total_wall = 0;
  std::uint64_t total_committed = 0, total_rolled_back = 0, sizes = 0;
  // The model notes (channels, NCCL protocol) of each size: after the table with --verbose, like the run
  // cost.
  std::vector<std::string> model_lines;
  char line[512];
  // NCCL's tuning model (nccl_tuning.hpp): the group's ranks and nodes on the cluster's fabric.
  const cluster::NcclShape shape =
      cluster::nccl_shape(cluster::nccl_fabric(params), group.count,
                          static_cast<std::uint32_t>(group.last_gpu() / params.gpus_per_node -
                                                     group.first / params.gpus_per_node + 1));
  for (std::uint64_t bytes = min_bytes;; bytes *= static_cast<std::uint64_t>(o.step_factor)) {
    // With "auto", the tree where NCCL's tuning model prefers it and the group has one GPU per node, or
    // `local` on each (NCCL's chained tree; cluster::auto_allreduce_algorithm, as the training program).
    if (auto_algorithm) {
      const bool tree =
          cluster::auto_allreduce_algorithm(bytes, shape, protocol, static_cast<std::uint32_t>(local)) ==
          cluster::Algorithm::kTree;
      algorithm =
          &cluster::collective_algorithm(tree ? cluster::Algorithm::kTree : cluster::Algorithm::kRing);
    }
    cluster::NcclCost cost;
    if (nccl_cost) cost = cluster::nccl_cost(*collective, algorithm->id, bytes, shape, protocol);
    // Channels: --channels, else one per rail, fewer for small messages as NCCL drops channels.
    std::uint32_t channels = static_cast<std::uint32_t>(o.channels);
    if (channels == 0 && nccl_cost && algorithm->id == cluster::Algorithm::kRing) {
      channels = cluster::nccl_channels(algorithm->id, cost.protocol, group.count, bytes, rail_channels);
    }
    auto program = std::make_shared<cluster::CollectiveProgram>(
        *collective, algorithm->id, group, bytes, chunk_bytes, static_cast<std::uint32_t>(local), channels);
    if (nccl_cost) {
      program->set_protocol_cost(cost.start_ps, cost.wire_factor);
    }
    cluster::ClusterModel model(params, program);
    std::unique_ptr<LpMap> map;
    if (o.engine.partition == "round-robin") {
      map = std::make_unique<RoundRobinLpMap>(model.lp_count(), ranks);
    } else {
      map = std::make_unique<BlockLpMap>(model.lp_count(), ranks);
    }
    Engine engine(model, *map, config, comm);
    const RunResult r = engine.run();
    // The collective's time is when its last GPU finished; every GPU of the group must have finished.
    std::uint64_t local[2] = {0, 0};  // max finish, GPUs of the group not done
    const auto& gpus = model.gpus();
    for (std::uint32_t slot = 0; slot < gpus.size(); ++slot) {
      const auto& s = gpus.state(slot);
      if (!group.rank_of(s.gpu)) continue;
      local[0] = std::max(local[0], s.finish_ps);
      if (!s.done) ++local[1];
    }
    std::uint64_t global[2] = {0, 0};
    MPI_Allreduce(&local[0], &global[0], 1, MPI_UINT64_T, MPI_MAX, comm);
    MPI_Allreduce(&local[1], &global[1], 1, MPI_UINT64_T, MPI_SUM, comm);
    if (global[1] != 0) {
      throw std::runtime_error("collective did not complete: " + std::to_string(global[1]) +
                               " GPUs still waiting");
    }
    if (rank == 0) {
      const double seconds = static_cast<double>(global[0]) / static_cast<double>(kPicosPerSecond);
      const double algbw = seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0;
      const double busbw = algbw * cluster::bus_factor(*collective, group.count);
      std::printf("  %14llu %14.3f %12.3f %12.3f %12llu %18s\n", static_cast<unsigned long long>(bytes),
                  seconds * 1e6, algbw, busbw, static_cast<unsigned long long>(r.total.committed),
                  hex(r.state_digest).c_str());
      ++sizes;
      total_wall += r.wall_seconds;
      total_committed += r.total.committed;
      total_rolled_back += r.total.rolled_back;
      std::snprintf(line, sizeof line,
                    "# %llu bytes: wall %.3f s, %.0f committed events/s, %llu rolled back, %d ranks\n",
                    static_cast<unsigned long long>(bytes), r.wall_seconds,
                    r.wall_seconds > 0 ? static_cast<double>(r.total.committed) / r.wall_seconds : 0.0,
                    static_cast<unsigned long long>(r.total.rolled_back), r.ranks);
      cost_lines.emplace_back(line);
      if (auto_algorithm) {
        std::snprintf(line, sizeof line, "# %llu bytes: algorithm %s\n",
                      static_cast<unsigned long long>(bytes),
                      std::string(cluster::to_string(algorithm->id)).c_str());
        model_lines.emplace_back(line);
      }
      if (algorithm->id == cluster::Algorithm::kRing) {
        std::snprintf(line, sizeof line, "# %llu bytes: %u channel(s)\n",
                      static_cast<unsigned long long>(bytes), program->channels());
        model_lines.emplace_back(line);
      }
      if (nccl_cost) {
        std::snprintf(
            line, sizeof line,
            "# %llu bytes: protocol %s, NCCL latency %.1f us (%.1f us charged beyond the wire), %.3f wire "
            "bytes per byte\n",
            static_cast<unsigned long long>(bytes), std::string(cluster::to_string(cost.protocol)).c_str(),
            cost.latency_us, static_cast<double>(cost.start_ps) * 1e-6, cost.wire_factor);
        model_lines.emplace_back(line);
      }
      if (r.ranks > 1) {  // where parallel time goes: cross-rank traffic and rollbacks
        const auto& t = r.total;
        std::snprintf(
            line, sizeof line,
            "# %llu bytes: committed remote %.1f%%, %llu rollbacks, %llu anti-messages, %llu GVT rounds, "
            "%llu MPI messages, %llu throttle waits\n",
            static_cast<unsigned long long>(bytes),
            t.committed > 0 ? 100.0 * static_cast<double>(t.committed_remote) / t.committed : 0.0,
            static_cast<unsigned long long>(t.rollbacks), static_cast<unsigned long long>(t.anti_sent),
            static_cast<unsigned long long>(t.gvt_rounds), static_cast<unsigned long long>(t.mpi_messages),
            static_cast<unsigned long long>(t.throttle_waits));
        cost_lines.emplace_back(line);
      }
      std::fflush(stdout);
    }
    if (bytes > max_bytes / static_cast<std::uint64_t>(o.step_factor) || bytes == 0) break;
  }
  if (rank == 0) {
    if (o.verbose) {
      for (const auto& l : model_lines) std::fputs(l.c_str(), stdout);
      for (const auto& l : cost_lines) std::fputs(l.c_str(), stdout);
    }
    std::printf(
        "# run cost: %llu sizes, wall %.3f s, %.0f committed events/s, %llu rolled back, %d ranks%s\n",
        static_cast<unsigned long long>(sizes), total_wall,
        total_wall > 0 ? static_cast<double>(total_committed) / total_wall : 0.0,
        static_cast<unsigned long long>(total_rolled_back), ranks, o.verbose ? "" : " (--verbose: per size)");
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

std::function<int()> add_collective_command(CLI::App& app, const CommandEnv& /*env*/) {
  auto o = std::make_shared<CollectiveOptions>();
  CLI::App* cmd = app.add_subcommand("collective", "nccl-tests-like collective sweep on a simulated cluster");
  cmd->add_option("--cluster", o->cluster,
                  "cluster spec, or an experiment spec (its cluster); text format or JSON");
  cmd->add_option("--op", o->op, "allreduce | allgather | reducescatter | alltoall | broadcast")
      ->capture_default_str();
  cmd->add_option("--algorithm,--algo", o->algo,
                  "ring (every op) | tree (double binary tree: allreduce, chained over each node's GPUs as "
                  "NCCL's; broadcast) | "
                  "hierarchical (all but alltoall) | auto (allreduce: NCCL's ring-or-tree choice per size)")
      ->capture_default_str();
  cmd->add_option("--gpus", o->gpus, "GPUs in the group (0 = all from --first)")->capture_default_str();
  cmd->add_option("--first", o->first, "first GPU of the group")->capture_default_str();
  cmd->add_option("--stride", o->stride, "GPU id stride within the group")->capture_default_str();
  cmd->add_option("--min-bytes", o->min_bytes, "smallest message size")->capture_default_str();
  cmd->add_option("--max-bytes", o->max_bytes, "largest message size")->capture_default_str();
  cmd->add_option("--step-factor", o->step_factor, "size multiplier between rows")->capture_default_str();
  cmd->add_option("--chunk-bytes", o->chunk_bytes, "pipeline chunk (broadcasts, tree all-reduce)")
      ->capture_default_str();
  cmd->add_option("--fidelity", o->fidelity, "packet | flow (default: the cluster spec's network.fidelity)");
  cmd->add_option("--local-gpus", o->local_gpus,
                  "group GPUs per node (hierarchical phases, rail-aligned rings, the tree's chains; 0 = the "
                  "node's GPUs in the group)")
      ->capture_default_str();
  cmd->add_option(
         "--protocol", o->protocol,
         "NCCL protocol cost (launch + per-step latency, wire bytes): auto (NCCL's choice by size) | "
         "ll | ll128 | simple | none")
      ->capture_default_str();
  cmd->add_option("--channels", o->channels,
                  "ring allreduce/allgather/reducescatter: rail-aligned rings the buffer is split over "
                  "(0 = one per rail when the group spans nodes)")
      ->capture_default_str();
  cmd->add_flag("--verbose", o->verbose,
                "after the table, each size's ring channels and NCCL protocol, and its run cost (wall, "
                "events/s, rollbacks)");
  add_engine_options(*cmd, o->engine);
  return [o, cmd]() -> int {
    if (!cmd->parsed()) return -1;
    return on_simulating_ranks(o->engine, false, [&](MPI_Comm comm) { return run_collective(*o, comm); });
  };
}

const CommandRegistrar kRegisterCollective{"collective", add_collective_command};

}  // namespace warpsim::cli
