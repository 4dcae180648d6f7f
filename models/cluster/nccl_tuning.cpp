// NCCL's tuning model (see nccl_tuning.hpp).
#include "models/cluster/nccl_tuning.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace warpsim::cluster {

namespace {

// tuning.cc ncclTunerConstantsDefaults, indexed [protocol] = LL, LL128, Simple (microseconds).
constexpr std::array<double, 3> kBaseRing = {6.6, 14.0, 8.4};
constexpr std::array<double, 3> kBaseTree = {6.8, 14.0, 8.4};
constexpr std::array<double, 3> kNvlinkRing = {0.6, 1.9, 3.4};
constexpr std::array<double, 3> kNvlinkTree = {0.6, 1.25, 4.0};
constexpr std::array<double, 3> kNetRing = {2.7, 4.0, 14.0};
constexpr std::array<double, 3> kNetTree = {5.0, 8.5, 14.0};
// getNetOverhead() on x86 Intel (1 us; AMD: 2), x3 for Simple: a floor on an intra-node step's latency
// once the ring leaves the node.
constexpr double kNetOverheadUs = 1.0;
// Bus bandwidth of each protocol as a fraction of Simple's (tuning.cc: ring LL x0.5, ring LL128 x0.92 =
// 120/128; the per-channel caps are not modelled) and the bytes each puts on the wire per data byte.
constexpr std::array<double, 3> kBusFraction = {0.5, 0.92, 1.0};
constexpr std::array<double, 3> kWireFactor = {2.0, 128.0 / 120.0, 1.0};
// The tree all-reduce's bus bandwidth (tuning.cc): 0.92 of the graph's, then LL x 1/3.8 and LL128 x 120/128
// across nodes (7/9 on one node).
constexpr double kTreeBusFraction = 0.92;
constexpr double kTreeLL = 1.0 / 3.8;
// ncclTopoGetAlgoTime: the ring Simple all-reduce's latency across nodes, x1.4 on compute capability >= 8.0
// (x1.9 before), once each rank's share per channel is at least 64 bytes.
constexpr double kRingPlateau = 1.4;
// treeCorrectionFactor[protocol][log2(bytes / 64)] for 64 B .. 256 MiB (tuning.cc): the tree runs below its
// model for medium sizes.
constexpr std::array<std::array<double, 24>, 3> kTreeCorrection = {{
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
}};

std::uint32_t log2i(std::uint64_t n) {
  std::uint32_t l = 0;
  while (n >>= 1) ++l;
  return l;
}

// The ring's steps as tuning.cc counts them for the bandwidth conversion (nsteps).
std::uint64_t ring_bandwidth_steps(Collective c, std::uint64_t n) {
  switch (c) {
    case Collective::kAllReduce:
      return 2 * (n - 1);
    case Collective::kAllGather:
    case Collective::kReduceScatter:
      return n - 1;
    case Collective::kBroadcast:
      return n;
    case Collective::kAllToAll:
      break;
  }
  return n;  // point-to-point: no conversion (n / n)
}

// Whether ncclTopoGetAlgoTime raises the latency by the ring's plateau factor.
bool ring_plateau(Collective c, Algorithm a, Protocol p, std::uint64_t bytes, const NcclShape& s) {
  if (c != Collective::kAllReduce || a == Algorithm::kTree || p != Protocol::kSimple || s.nodes <= 1 ||
      s.ranks < 2)
    return false;
  // Channels: one per member on a node (the rails the ring uses; docs/collectives.md).
  const std::uint64_t channels = std::max<std::uint64_t>(1, s.ranks / s.nodes);
  return bytes / (channels * s.ranks) >= 64;
}

}  // namespace

std::optional<Protocol> parse_protocol(std::string_view name) {
  if (name == "ll") return Protocol::kLL;
  if (name == "ll128") return Protocol::kLL128;
  if (name == "simple") return Protocol::kSimple;
  return std::nullopt;
}

std::string_view to_string(Protocol p) {
  switch (p) {
    case Protocol::kLL:
      return "ll";
    case Protocol::kLL128:
      return "ll128";
    case Protocol::kSimple:
      return "simple";
  }
  return "?";
}

NcclFabric nccl_fabric(const ClusterParams& params) {
  NcclFabric f;
  f.nvlink_step_wire_ps = 2 * params.injection_latency_ps + 2 * params.nvlink.latency_ps;
  f.net_step_wire_ps =
      2 * params.injection_latency_ps + 2 * params.links[0].latency_ps + params.switch_latency_ps;
  f.nvlink_bytes_per_s = params.nvlink.bandwidth_gbps * 1e9 / 8;
  f.nic_bytes_per_s = params.links[0].bandwidth_gbps * 1e9 / 8;
  return f;
}

NcclShape nccl_shape(const NcclFabric& fabric, std::uint32_t ranks, std::uint32_t nodes) {
  NcclShape s;
  s.ranks = ranks;
  s.nodes = std::max<std::uint32_t>(1, nodes);
  s.nvlink_step_wire_ps = fabric.nvlink_step_wire_ps;
  s.net_step_wire_ps = fabric.net_step_wire_ps;
  s.simple_bus_bytes_per_s =
      s.nodes > 1 ? static_cast<double>(ranks / s.nodes) * fabric.nic_bytes_per_s : fabric.nvlink_bytes_per_s;
  return s;
}

double nccl_latency_us(Collective c, Algorithm a, Protocol p, const NcclShape& s) {
  const auto i = static_cast<std::size_t>(p);
  const std::uint64_t n = s.ranks, nodes = std::max<std::uint32_t>(1, s.nodes);
  if (n < 2) return 0;
  const std::uint64_t ppn = n / nodes;
  if (a == Algorithm::kTree) {
    // tuning.cc: base + 2 ((ppn - 1) intraLat + log2(nNodes) interLat) for the all-reduce; the broadcast
    // (not a tree in NCCL) as log2(n) network-or-NVLink steps.
    const double intra = kNvlinkTree[i], inter = kNetTree[i];
    if (c == Collective::kAllReduce) return kBaseTree[i] + 2 * ((ppn - 1) * intra + log2i(nodes) * inter);
    return kBaseTree[i] + log2i(n) * (nodes > 1 ? inter : intra);
  }
  if (c == Collective::kAllToAll) return kBaseRing[i];  // point-to-point: no ring steps
  // Ring (and the two-level rings): base + (nsteps - nInterSteps) intraLat + nInterSteps interLat, with
  // intraLat raised to the network overhead once the ring leaves the node; ppn == 1 uses the tree's
  // network latency.
  std::uint64_t steps = 0, inter_steps = 0;
  const bool two = c == Collective::kAllReduce;
  if (a == Algorithm::kHierarchical) {
    steps = (two ? 2 : 1) * ((ppn - 1) + (nodes - 1));
  } else {
    steps = c == Collective::kAllReduce ? 2 * (n - 1) : c == Collective::kBroadcast ? n : n - 1;
  }
  if (nodes > 1) inter_steps = (two ? 2 : 1) * (nodes - 1);
  double intra = kNvlinkRing[i];
  if (nodes > 1) intra = std::max(intra, kNetOverheadUs * (p == Protocol::kSimple ? 3 : 1));
  const double inter = ppn == 1 ? kNetTree[i] : kNetRing[i];
  if (nodes == 1) intra = kNvlinkRing[i];
  return kBaseRing[i] + static_cast<double>(steps - inter_steps) * intra +
         static_cast<double>(inter_steps) * inter;
}

double nccl_time_us(Collective c, Algorithm a, Protocol p, std::uint64_t bytes, const NcclShape& s) {
  const auto i = static_cast<std::size_t>(p);
  const std::uint64_t n = std::max<std::uint32_t>(1, s.ranks);
  double latency = nccl_latency_us(c, a, p, s);
  if (ring_plateau(c, a, p, bytes, s)) latency *= kRingPlateau;
  double bw = 0;  // algorithm bandwidth, bytes/s
  if (a == Algorithm::kTree && c == Collective::kAllReduce) {
    double bus = s.simple_bus_bytes_per_s * kTreeBusFraction;
    if (p == Protocol::kLL) bus *= kTreeLL;
    if (p == Protocol::kLL128) bus *= s.nodes <= 1 ? 7.0 / 9.0 : 120.0 / 128.0;
    bw = bus * 0.5;
    const std::uint64_t units = bytes >> 6;
    if (units > 0) {
      const std::uint32_t log_size = log2i(units);
      if (log_size < 23) bw *= kTreeCorrection[i][log_size];
    }
  } else {
    // Rings (and the two-level rings, as NCCL's ring for the choice), point-to-point: the protocol's
    // fraction of Simple's bus bandwidth, converted to algorithm bandwidth by n / nsteps.
    bw = s.simple_bus_bytes_per_s * kBusFraction[i];
    if (n > 1) bw *= static_cast<double>(n) / static_cast<double>(ring_bandwidth_steps(c, n));
  }
  return latency + (bw > 0 ? static_cast<double>(bytes) / bw * 1e6 : 0);
}

Algorithm nccl_allreduce_algorithm(std::uint64_t bytes, const NcclShape& s,
                                   std::optional<Protocol> protocol) {
  if (s.ranks < 3 || s.simple_bus_bytes_per_s <= 0) return Algorithm::kRing;  // no fabric known: the ring
  const auto best_time = [&](Algorithm a) {
    if (protocol) return nccl_time_us(Collective::kAllReduce, a, *protocol, bytes, s);
    double t = std::numeric_limits<double>::infinity();
    for (const Protocol p : {Protocol::kLL, Protocol::kLL128, Protocol::kSimple})
      t = std::min(t, nccl_time_us(Collective::kAllReduce, a, p, bytes, s));
    return t;
  };
  return best_time(Algorithm::kTree) < best_time(Algorithm::kRing) ? Algorithm::kTree : Algorithm::kRing;
}

Algorithm auto_allreduce_algorithm(std::uint64_t bytes, const NcclShape& s, std::optional<Protocol> protocol,
                                   std::uint32_t members_per_node) {
  if (std::uint64_t{s.nodes} * std::max<std::uint32_t>(1, members_per_node) != s.ranks)
    return Algorithm::kRing;
  return nccl_allreduce_algorithm(bytes, s, protocol);
}

NcclCost nccl_cost(Collective c, Algorithm a, std::uint64_t bytes, const NcclShape& s,
                   std::optional<Protocol> protocol) {
  Protocol best = Protocol::kSimple;
  if (protocol) {
    best = *protocol;
  } else {
    double best_time = std::numeric_limits<double>::infinity();
    for (const Protocol p : {Protocol::kLL, Protocol::kLL128, Protocol::kSimple}) {
      const double t = nccl_time_us(c, a, p, bytes, s);
      if (t < best_time) best_time = t, best = p;
    }
  }
  NcclCost cost;
  cost.protocol = best;
  cost.latency_us = nccl_latency_us(c, a, best, s);
  if (ring_plateau(c, a, best, bytes, s)) cost.latency_us *= kRingPlateau;
  cost.wire_factor = kWireFactor[static_cast<std::size_t>(best)];
  // The model already charges each step's wire latency; charge NCCL's latency beyond it up front.
  const std::uint64_t n = s.ranks, nodes = std::max<std::uint32_t>(1, s.nodes);
  std::uint64_t net_steps = 0, nvl_steps = 0;
  if (n > 1 && c != Collective::kAllToAll) {
    if (a == Algorithm::kTree) {
      const std::uint64_t depth = log2i(n);
      net_steps = nodes > 1 ? (c == Collective::kAllReduce ? 2 : 1) * log2i(nodes) : 0;
      nvl_steps = (c == Collective::kAllReduce ? 2 : 1) * depth - std::min<std::uint64_t>(net_steps, depth);
    } else {
      const bool two = c == Collective::kAllReduce;
      net_steps = nodes > 1 ? (two ? 2 : 1) * (nodes - 1) : 0;
      const std::uint64_t all = a == Algorithm::kHierarchical
                                    ? (two ? 2 : 1) * ((n / nodes - 1) + (nodes - 1))
                                    : (two                           ? 2 * (n - 1)
                                       : c == Collective::kBroadcast ? n
                                                                     : n - 1);
      nvl_steps = all - net_steps;
    }
  }
  const double wire_us =
      1e-6 * static_cast<double>(net_steps * s.net_step_wire_ps + nvl_steps * s.nvlink_step_wire_ps);
  cost.start_ps = static_cast<SimTime>(std::max(0.0, cost.latency_us - wire_us) * 1e6);
  return cost;
}

std::uint32_t nccl_channels(Algorithm a, Protocol p, std::uint32_t ranks, std::uint64_t bytes,
                            std::uint32_t max_channels) {
  // src/include/device.h (NCCL_*_MAX_NTHREADS) and comm.h (NCCL_*_THREAD_THRESHOLD); tuning.cc multiplies
  // the ring's LL threshold by nRanks.
  constexpr std::array<std::uint64_t, 3> kThreads = {512, 640, 512};
  constexpr std::array<std::uint64_t, 3> kThreshold = {8, 8, 64};
  const auto i = static_cast<std::size_t>(p);
  std::uint64_t threshold = kThreshold[i];
  if (p == Protocol::kLL && a != Algorithm::kTree) threshold *= ranks;
  std::uint32_t nc = std::max<std::uint32_t>(1, max_channels);
  while (nc >= 2 && bytes < nc * kThreads[i] * threshold) --nc;
  return nc;
}

}  // namespace warpsim::cluster
