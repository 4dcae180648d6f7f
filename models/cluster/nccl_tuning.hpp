// NCCL's tuning model (NVIDIA/nccl src/graph/tuning.cc, v2.30.7, commit 5067397): the per-collective
// latency of each algorithm and protocol, the bus bandwidth each protocol achieves of the Simple one, and
// the protocol NCCL picks as the one with the least predicted time (latency + bytes / bandwidth). The
// cluster model simulates the bytes; this adds what the wire does not show: the launch and the per-step
// protocol latency (flag polling, the network proxy), and the protocol's extra bytes (LL carries 8 bytes of
// data per 16-byte line, LL128 120 of 128). Values and formulas: docs/collectives.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "engine/sim_time.hpp"
#include "models/cluster/cluster_params.hpp"
#include "models/cluster/collective_algorithms.hpp"

namespace warpsim::cluster {

enum class Protocol : std::uint8_t { kLL, kLL128, kSimple };
std::optional<Protocol> parse_protocol(std::string_view name);  // "ll", "ll128", "simple"
std::string_view to_string(Protocol p);

// What the model needs to know of the group and the fabric.
struct NcclShape {
  std::uint32_t ranks = 1;
  std::uint32_t nodes = 1;            // ranks / nodes per node
  SimTime nvlink_step_wire_ps = 0;    // latency the cluster model itself charges per NVLink hop
  SimTime net_step_wire_ps = 0;       // ... per network hop
  double simple_bus_bytes_per_s = 0;  // the Simple protocol's bus bandwidth (for the choice only)
};

// What the model needs to know of the fabric, whatever the group: the wire latency the cluster model charges
// per NVLink step (GPU-NIC-NVSwitch-NIC-GPU: 2 injections + 2 NVLink hops) and per network step on a leaf
// (GPU-NIC-leaf-NIC-GPU: 2 injections + 2 links + 1 switch), NVLink's and one NIC's bandwidth.
struct NcclFabric {
  SimTime nvlink_step_wire_ps = 0;
  SimTime net_step_wire_ps = 0;
  double nvlink_bytes_per_s = 0;
  double nic_bytes_per_s = 0;
  bool operator==(const NcclFabric&) const = default;
};
NcclFabric nccl_fabric(const ClusterParams& params);
// The shape of a group of `ranks` on `nodes` nodes: the Simple protocol's bus bandwidth is the node's NICs
// (ranks per node x one NIC) once the group leaves the node, else NVLink (as `warpsim collective`).
NcclShape nccl_shape(const NcclFabric& fabric, std::uint32_t ranks, std::uint32_t nodes);

struct NcclCost {
  Protocol protocol = Protocol::kSimple;
  double latency_us = 0;   // NCCL's latency for (collective, algorithm, protocol)
  SimTime start_ps = 0;    // what the program charges up front: latency minus the modelled wire
  double wire_factor = 1;  // bytes on the wire per byte of data
};

// NCCL's latency in microseconds: base + per-step hardware latency (tuning.cc).
double nccl_latency_us(Collective c, Algorithm a, Protocol p, const NcclShape& s);
// NCCL's predicted time in microseconds of `bytes` under (c, a, p), as ncclTopoGetAlgoTime computes it to
// choose: latency (x1.4 for a ring Simple all-reduce across nodes, NCCL's "plateau effect of ring" on
// compute capability 8.0 and later, i.e. every shipped GPU) + bytes / algorithm bandwidth, where the
// algorithm bandwidth is the protocol's bus bandwidth x n/nsteps for a ring and x 0.5 for a tree, the tree's
// bus bandwidth being 0.92 of Simple's (LL: a further 1/3.8, LL128: 120/128 across nodes, 7/9 on one node)
// and corrected for medium sizes (treeCorrectionFactor). The per-channel caps are not modelled.
double nccl_time_us(Collective c, Algorithm a, Protocol p, std::uint64_t bytes, const NcclShape& s);
// The cost of `protocol`, or (nullopt) of the protocol NCCL would pick for `bytes` (least nccl_time_us).
NcclCost nccl_cost(Collective c, Algorithm a, std::uint64_t bytes, const NcclShape& s,
                   std::optional<Protocol> protocol = std::nullopt);
// The algorithm NCCL picks for an all-reduce of `bytes` between the ring and the tree (the two it would
// compare on a fabric without NVLS or CollNet): the one whose best protocol (or `protocol`, if forced) has
// the least nccl_time_us; the ring on a tie, for groups of fewer than 3 ranks and without a bandwidth.
Algorithm nccl_allreduce_algorithm(std::uint64_t bytes, const NcclShape& s,
                                   std::optional<Protocol> protocol = std::nullopt);
// The all-reduce algorithm warpsim runs for "auto" (training.dp_allreduce_algorithm, `warpsim collective
// --algorithm auto`): NCCL's choice, but the tree only where warpsim builds NCCL's tree for the group: one
// rank per node (the flat double binary tree), or `members_per_node` ranks on each node (NCCL's chains of a
// node's GPUs under an inter-node tree per channel, tree_collectives.hpp). Any other layout keeps the ring.
Algorithm auto_allreduce_algorithm(std::uint64_t bytes, const NcclShape& s,
                                   std::optional<Protocol> protocol = std::nullopt,
                                   std::uint32_t members_per_node = 1);

// NCCL's channel count for a ring or tree of `bytes` under `protocol` (src/enqueue.cc): from
// `max_channels` down while bytes < channels x threads x threshold (threads: LL 512, LL128 640, Simple 512;
// threshold per thread: LL 8 x ranks for the ring, 8 for the tree; LL128 8; Simple 64).
std::uint32_t nccl_channels(Algorithm a, Protocol p, std::uint32_t ranks, std::uint64_t bytes,
                            std::uint32_t max_channels);

}  // namespace warpsim::cluster
