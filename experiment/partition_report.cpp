// An experiment's LP -> rank map and its quality (see partition_report.hpp).
#include "experiment/partition_report.hpp"

#include <chrono>
#include <memory>
#include <string>

#include "experiment/lp_graph.hpp"
#include "experiment/setting_error.hpp"
#include "experiment/training_partition.hpp"
#include "experiment/training_setup.hpp"
#include "experiment/spec/cluster_spec.hpp"
#include "experiment/spec/experiment_spec.hpp"
#include "models/cluster/topology.hpp"
#include "partition/map_file.hpp"
#include "partition/quality.hpp"
#include "partition/range_map.hpp"

namespace warpsim::experiment {

namespace {

// Above this many LPs the quality is evaluated on the node-level graph (a vertex split by the map then
// counts on the rank of its first LP; the report says how many were split).
constexpr std::uint64_t kMaxLpGraph = 8u << 20;

}  // namespace

io::KeyValueReport partition_report(const PartitionRequest& o, int rank) {
  if (o.ranks < 1) throw SettingError("--ranks must be >= 1 (got " + std::to_string(o.ranks) + ")");
  const spec::ExperimentSpec exp = spec::load_experiment_spec(o.spec_path);
  const cluster::ClusterParams params = spec::to_cluster_params(exp.cluster());
  const auto job = build_job(exp);
  training::Granularity gran = training::auto_granularity(params);
  if (o.granularity != "auto") {
    const auto g = training::parse_granularity(o.granularity);
    if (!g)
      throw SettingError("--granularity: unknown '" + o.granularity + "' (expected auto, lp, node or group)");
    gran = *g;
  }
  const auto start = std::chrono::steady_clock::now();
  const std::unique_ptr<LpMap> map =
      make_training_partition(o.strategy, params, job, params.storage_targets, o.ranks, gran, "--strategy");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const std::uint64_t lps = cluster::make_topology(params)->lp_count();
  training::TrafficSummary traffic;
  const auto eval_gran = lps <= kMaxLpGraph ? training::Granularity::kLp : training::Granularity::kNode;
  const partition::PartitionGraph graph =
      training::build_lp_graph(params, job, params.storage_targets, eval_gran, true, &traffic);
  const partition::PartitionQuality q = partition::evaluate(graph, *map);
  if (!o.write_map.empty() && rank == 0) partition::write_map_file(o.write_map, *map, lps);
  if (rank != 0) return {};

  io::KeyValueReport report;
  report.add("experiment", exp.name());
  report.add("strategy", o.strategy);
  report.add("granularity", std::string(gran == training::Granularity::kLp     ? "lp"
                                        : gran == training::Granularity::kNode ? "node"
                                                                               : "group"));
  report.add("ranks", static_cast<std::uint64_t>(o.ranks));
  report.add("lps", lps);
  report.add("gpus", static_cast<std::uint64_t>(job->world_size()));
  report.add("expected compute ops per step", traffic.compute, 0);
  report.add("expected tensor packets per step", traffic.tensor, 0);
  report.add("expected context packets per step", traffic.context, 0);
  report.add("expected data packets per step", traffic.data, 0);
  report.add("expected expert packets per step", traffic.expert, 0);
  report.add("expected pipeline packets per step", traffic.pipeline, 0);
  report.add("expected checkpoint requests per step", traffic.checkpoint, 0);
  report.add("expected events per step", graph.total_weight(), 0);
  report.add("expected messages per step", q.message_weight, 0);
  report.add("edge cut", q.edge_cut, 4);
  report.add("load imbalance", q.imbalance, 4);
  if (q.split_vertices != 0) report.add("evaluated on nodes, split vertices", q.split_vertices);
  if (const auto* ranged = dynamic_cast<const partition::RangeLpMap*>(map.get())) {
    report.add("map runs", static_cast<std::uint64_t>(ranged->runs().size()));
    report.add("map bytes",
               static_cast<std::uint64_t>(ranged->runs().size() * sizeof(partition::RangeLpMap::Run)));
  }
  report.add("partition seconds", seconds, 3);
  const double total = graph.total_weight();
  for (int r = 0; r < o.ranks; ++r) {
    const auto i = static_cast<std::size_t>(r);
    report.add("rank " + std::to_string(r) + " lps", q.lps[i]);
    report.add("rank " + std::to_string(r) + " weight share", total > 0 ? q.weight[i] / total : 0.0, 4);
  }
  if (!o.write_map.empty()) report.add("map file", o.write_map);
  return report;
}

}  // namespace warpsim::experiment
