// Plain cluster parameters the cluster model is built from (engine units: picoseconds, bytes, Gbit/s).
// Kept free of protobuf so models/ does not depend on the spec format; experiment/spec/cluster_spec.hpp
// converts a validated ClusterSpec into this struct.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "engine/sim_time.hpp"

namespace warpsim::cluster {

// How messages cross the fabric: `packet` moves every packet through NIC and switch queues (congestion and
// head-of-line blocking emerge); `flow` gives each message a max-min fair share of every link on its path
// (one event per message start, per completion and per rate change; see flow_network.hpp).
enum class Fidelity : std::uint8_t { kPacket, kFlow };
// Flow fidelity keeps each flow's path in a fixed array: fat-tree paths have at most 6 links, torus paths
// 2 + the router hops (the spec check refuses larger tori under flow fidelity).
inline constexpr std::size_t kMaxFlowPathLinks = 16;

// The scale-out topology family: a rail-optimized fat-tree (fat_tree.hpp) or a torus of per-node routers
// (torus.hpp).
enum class TopologyKind : std::uint8_t { kFatTree, kTorus };

struct LinkParams {
  double bandwidth_gbps = 0;  // 10^9 bit/s
  SimTime latency_ps = 0;
};

struct ClusterParams {
  std::uint32_t nodes = 1;
  std::uint32_t gpus_per_node = 8;
  LinkParams nvlink{3600, 200 * kPicosPerNano};
  TopologyKind topology = TopologyKind::kFatTree;
  // Torus: nodes per dimension (1 to 3 dimensions; the product is `nodes`; 0 ends the list). Links:
  // links[0] NIC <-> router, links[1] router <-> router.
  std::array<std::uint32_t, 3> torus_dims{0, 0, 0};
  std::uint32_t tiers = 2;  // fat-tree tiers: 2 or 3
  std::uint32_t radix = 64;
  double oversubscription = 1.0;
  // Fat-tree: [0] NIC <-> leaf, [1] leaf <-> spine/aggregation, [2] aggregation <-> core.
  std::array<LinkParams, 3> links{LinkParams{400, 500 * kPicosPerNano}, LinkParams{400, 500 * kPicosPerNano},
                                  LinkParams{400, 500 * kPicosPerNano}};
  SimTime injection_latency_ps = 100 * kPicosPerNano;  // GPU <-> NIC, one way
  Fidelity fidelity = Fidelity::kPacket;
  std::uint32_t packet_bytes = 4096;
  // Packet fidelity: a switch starts forwarding a packet as soon as its head arrives (cut-through) instead
  // of after its tail (store-and-forward); saves one input serialization per switch hop when the port is
  // idle.
  bool cut_through = false;
  std::uint64_t switch_buffer_bytes = 1 << 20;  // per output port
  SimTime switch_latency_ps = 100 * kPicosPerNano;
  std::uint32_t storage_targets = 0;
  double storage_bandwidth_gbps = 100;
  double storage_client_gbps = 25;
  SimTime storage_latency_ps = 10 * kPicosPerMicro;
};

}  // namespace warpsim::cluster
