// The partitioner's view of a training job on a cluster: builds partition/'s generic PartitionGraph from the
// job's per-step traffic on the packet-level fat-tree, so partition/ never learns about GPUs.
//
// Weights are expected events per training step, derived from the workload, not constants:
//   - one representative GPU per pipeline stage expands its step into cluster ops (the adapter's own
//     expansion, training_program.hpp); every Send becomes a flow class (group kind, ring distance) with its
//     messages and packets (ceil(bytes / packet_bytes)); all GPUs of a stage share the classes, each with its
//     own group members, so TP groups (many all-reduces per layer) come out chatty, pipeline neighbours
//     medium and the DP ring (one bucketed all-reduce per step) light, in whatever proportion the job has;
//     a tree all-reduce (training.dp_allreduce_algorithm) contributes the representative's tree links as
//     its classes, an approximation (tree roles differ between members; their traffic is about equal);
//   - each flow is routed like the model does (NIC -> NVSwitch -> NIC inside a node; NIC -> leaf -> (spine |
//     aggregation -> core -> aggregation) -> leaf -> NIC otherwise, ECMP spread evenly over up ports) and
//     every hop adds its packets as events: GPU -> NIC one per message, NIC self one per further packet,
//     one per packet per link, NIC -> GPU one per message at each end; compute ops one event each.
// A vertex's weight is the events its LPs receive; an edge's weight the events its two ends exchange.
//
// Granularity: `lp` (one vertex per LP: for quality reports and small clusters), `node` (a node's GPUs,
// NICs and NVSwitch as one vertex, each switch and storage target its own), `group` (a rail group: its
// nodes plus their leaf switches). Vertices are listed in hierarchy order with coordinates {pod, group}:
// per pod, per group its nodes then its leaves, then the pod's aggregation switches; spines (2 tiers),
// cores, storage targets and any extra LPs are shared. Memory: O(vertices + edges) of the chosen
// granularity; without edges (topology strategy) O(vertices) plus one flow table per pipeline stage.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "models/cluster/cluster_params.hpp"
#include "models/workload/job.hpp"
#include "partition/partition_graph.hpp"

namespace warpsim::training {

enum class Granularity { kLp, kNode, kGroup };
std::optional<Granularity> parse_granularity(std::string_view text);
// `node` unless that graph would exceed `max_vertices`, then `group`.
Granularity auto_granularity(const cluster::ClusterParams& params, std::uint64_t max_vertices = 200000);

// Expected per-step totals over the job (for reports): packets sent per kind of traffic, checkpoint
// requests, compute ops.
struct TrafficSummary {
  double tensor = 0, context = 0, data = 0, expert = 0, pipeline = 0, checkpoint = 0, compute = 0;
};

partition::PartitionGraph build_lp_graph(const cluster::ClusterParams& params,
                                         const std::shared_ptr<const workload::Job>& job,
                                         std::uint32_t storage_targets, Granularity granularity,
                                         bool with_edges, TrafficSummary* summary = nullptr);

}  // namespace warpsim::training
