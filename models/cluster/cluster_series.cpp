// Cluster model time-series declarations and component registration (see cluster_series.hpp).
#include "models/cluster/cluster_series.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>

namespace warpsim::cluster {

namespace {

// Component name prefix of a switch's ports.
const char* switch_name(LpKind k) {
  switch (k) {
    case LpKind::kNvSwitch:
      return "nvswitch";
    case LpKind::kLeaf:
      return "leaf";
    case LpKind::kTier1:
      return "spine";
    case LpKind::kRouter:
      return "router";
    default:
      return "core";
  }
}

// GPUs and their NICs share one topology row: node, GPU in node, leaf switch (torus: router), LP id.
std::array<double, 4> gpu_columns(const Topology& topo, std::uint32_t gpu, LpId lp) {
  const std::uint32_t per_node = topo.params().gpus_per_node;
  return {double(topo.node_of(gpu)), double(gpu % per_node), double(topo.edge_switch_of(gpu)), double(lp)};
}

}  // namespace

ClusterSeries::ClusterSeries(SeriesRecorder& recorder, const Topology& topology)
    : recorder_(&recorder), topo_(topology), packet_bytes_(topology.params().packet_bytes) {
  using A = Aggregation;
  gpu_ = recorder.declare_kind(
      "gpu", topology.gpus(),
      {{"busy", "fraction", A::kTimeAverage, "share of the interval spent running compute ops"},
       {"comm_wait", "fraction", A::kTimeAverage,
        "share of the interval blocked in a wait for sends, receives or storage requests (not computing)"},
       {"flops", "FLOP", A::kSum, "floating-point operations of compute ops, spread over each op's run"},
       {"hbm_bytes", "bytes", A::kSum, "HBM traffic of compute ops, spread over each op's run"},
       {"bytes_sent", "bytes", A::kSum, "message bytes posted to the NIC (sends, collective steps)"}},
      {{"node", "", false, "node index"},
       {"local_rank", "", false, "GPU index within its node"},
       {"leaf", "", false, "leaf switch index of the GPU's NIC (its rail; torus: the node's router)"},
       {"lp", "", false, "LP id"}});
  nic_ = recorder.declare_kind(
      // Flow fidelity replaces the packet NICs (FlowNicLp records nothing): the kind then has no rows.
      "nic", topology.has_flow_network() ? 0 : topology.gpus(),
      {{"tx_bytes", "bytes", A::kSum, "bytes serialized on all egress ports, spread over serialization"},
       {"nvlink_tx_bytes", "bytes", A::kSum, "the part of tx_bytes sent over NVLink to the node's NVSwitch"},
       {"rx_bytes", "bytes", A::kSum, "bytes of packets received (at their arrival)"},
       {"queue_depth_max", "bytes", A::kMax, "largest egress backlog a packet found, itself included"},
       {"queue_depth_mean", "bytes", A::kTimeAverage, "time-averaged egress backlog"}},
      {{"node", "", false, "node index"},
       {"rail", "", false, "NIC index within its node (the GPU it serves)"},
       {"leaf", "", false, "leaf switch (torus: router) index the NIC attaches to"},
       {"lp", "", false, "LP id"}});
  port_ = recorder.declare_kind(
      "switch_port", topology.port_total(),
      {{"bytes", "bytes", A::kSum, "bytes serialized by the output port, spread over serialization"},
       {"queue_depth_max", "bytes", A::kMax, "largest output-queue backlog a packet found, itself included"},
       {"queue_depth_mean", "bytes", A::kTimeAverage, "time-averaged output-queue backlog"},
       {"overflows", "packets", A::kSum,
        "packets that found more than network.switch_buffer_bytes queued (a lossless fabric would pause)"}},
      {{"switch_lp", "", false, "LP id of the switch"},
       {"tier", "", false, "0 NVSwitch, 1 leaf (torus: router), 2 spine/aggregation, 3 core"},
       {"switch_index", "", false, "index of the switch within its tier (node index for NVSwitches)"},
       {"port", "", false, "output port index within the switch"},
       {"peer_lp", "", false, "LP id behind the port (-1: no cable, an empty port)"},
       {"bandwidth_gbps", "Gbit/s", true,
        "link bandwidth of the port (utilization = bytes*8/(interval*bw))"}});
  storage_ = recorder.declare_kind(
      "storage", topology.params().storage_targets,
      {{"read_bytes", "bytes", A::kSum, "bytes read, spread over their service at the target bandwidth"},
       {"write_bytes", "bytes", A::kSum, "bytes written, spread over their service at the target bandwidth"},
       {"requests", "requests", A::kSum, "requests received"},
       {"queued_requests", "requests", A::kTimeAverage,
        "time-averaged requests outstanding (queued or served)"},
       {"queue_depth_max", "bytes", A::kMax, "largest backlog a request found, itself included"}},
      {{"target", "", false, "storage target index"}, {"lp", "", false, "LP id"}});
}

SeriesRecorder::Component ClusterSeries::add_gpu(LpId lp) {
  const std::uint32_t gpu = topo_.gpu_of(lp);
  return recorder_->add_component(gpu_, gpu, "gpu" + std::to_string(gpu), gpu_columns(topo_, gpu, lp));
}

SeriesRecorder::Component ClusterSeries::add_nic(LpId lp) {
  const std::uint32_t gpu = topo_.gpu_of(lp);
  const auto c =
      recorder_->add_component(nic_, gpu, "nic" + std::to_string(gpu), gpu_columns(topo_, gpu, lp));
  NicPorts ports;
  for (std::uint32_t p = 0; p < std::min<std::uint32_t>(2, topo_.port_count(lp)); ++p) {
    const PortPeer peer = topo_.peer(lp, p);
    ports.link[p] = link_of(peer.link.bandwidth_gbps);
    ports.nvlink[p] = topo_.kind_of(peer.lp) == LpKind::kNvSwitch;
  }
  if (nic_ports_.size() <= c.local) nic_ports_.resize(c.local + 1);
  nic_ports_[c.local] = ports;
  return c;
}

SeriesRecorder::Component ClusterSeries::add_storage(LpId lp) {
  const std::uint32_t target = static_cast<std::uint32_t>(lp - topo_.storage_lp(0));
  const std::array<double, 2> cols = {double(target), double(lp)};
  return recorder_->add_component(storage_, target, "storage" + std::to_string(target), cols);
}

std::uint32_t ClusterSeries::add_switch(LpId lp) {
  const std::uint64_t base = topo_.port_base(lp);
  const LpKind kind = topo_.kind_of(lp);
  const SwitchPlace place = topo_.switch_place(lp);
  const int tier = place.tier;
  const std::uint64_t index = place.index;
  const std::string prefix = std::string(switch_name(kind)) + std::to_string(index) + ".p";
  std::uint32_t local0 = 0;
  for (std::uint32_t p = 0; p < topo_.port_count(lp); ++p) {
    const PortPeer peer = topo_.peer(lp, p);
    // An empty port (a fat tree's last leaf or pod not filled) has no peer: -1.
    const double peer_lp = topo_.port_connected(lp, p) ? double(peer.lp) : -1.0;
    const std::array<double, 6> cols = {double(lp), double(tier), double(index),
                                        double(p),  peer_lp,      peer.link.bandwidth_gbps};
    const auto c = recorder_->add_component(port_, base + p, prefix + std::to_string(p), cols);
    if (p == 0) local0 = c.local;
    if (port_links_.size() <= c.local) port_links_.resize(c.local + 1);
    port_links_[c.local] = link_of(peer.link.bandwidth_gbps);
  }
  return local0;
}

}  // namespace warpsim::cluster
