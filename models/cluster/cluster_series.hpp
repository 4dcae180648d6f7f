// Per-component time series of the cluster model (docs/hdf5-layout.md): declares the kinds "gpu", "nic",
// "switch_port" and "storage" with their metrics, units and topology columns in a SeriesRecorder, and
// registers each LP's components as the engine hands LPs to a rank. The LP types record from their
// commit() handlers only (committed events are final), through the metric indices below.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/series_recorder.hpp"
#include "models/cluster/cluster_events.hpp"
#include "models/cluster/topology.hpp"

namespace warpsim::cluster {

// Metric indices, in declaration order (cluster_series.cpp declares them with units and descriptions).
namespace gpu_metric {
enum : std::uint32_t { kBusy, kCommWait, kFlops, kHbmBytes, kBytesSent };
}
namespace nic_metric {
enum : std::uint32_t { kTxBytes, kNvlinkTxBytes, kRxBytes, kQueueMax, kQueueMean };
}
namespace port_metric {
enum : std::uint32_t { kBytes, kQueueMax, kQueueMean, kOverflows };
}
namespace storage_metric {
enum : std::uint32_t { kReadBytes, kWriteBytes, kRequests, kQueuedRequests, kQueueMax };
}

class ClusterSeries {
 public:
  // Declares the four kinds (every rank, same order). Touches nothing per LP: switch ports are numbered by
  // Topology::port_base(), so the cost does not grow with the cluster.
  ClusterSeries(SeriesRecorder& recorder, const Topology& topology);

  SeriesRecorder& recorder() { return *recorder_; }
  // Registration from add_lp(): the component of the LP's slot (slots and components are numbered alike).
  SeriesRecorder::Component add_gpu(LpId lp);
  SeriesRecorder::Component add_nic(LpId lp);
  SeriesRecorder::Component add_storage(LpId lp);
  // Registers the ports of switch `lp` and returns the local index of its port 0 (port p is that + p).
  std::uint32_t add_switch(LpId lp);

  SeriesRecorder::KindId gpu_kind() const { return gpu_; }
  SeriesRecorder::KindId nic_kind() const { return nic_; }
  SeriesRecorder::KindId port_kind() const { return port_; }
  SeriesRecorder::KindId storage_kind() const { return storage_; }

  // What the commit handlers would otherwise ask the topology again on every event (a route and a peer
  // lookup cost as much as the recording): per local component, flat arrays.
  // Link bandwidth of local switch-port component `local`, and serialization_ps(bytes, that bandwidth):
  // looked up for a full packet (most of them; a division less per commit), else computed.
  double port_gbps(std::uint32_t local) const { return port_links_[local].gbps; }
  SimTime port_serialization_ps(std::uint32_t local, std::uint64_t bytes) const {
    return port_links_[local].serialization(bytes, packet_bytes_);
  }
  // The same for port `port` (0 or 1) of the NIC in local slot `slot`, and whether it leads to the NVSwitch.
  double nic_gbps(std::uint32_t slot, std::uint32_t port) const { return nic_ports_[slot].link[port].gbps; }
  SimTime nic_serialization_ps(std::uint32_t slot, std::uint32_t port, std::uint64_t bytes) const {
    return nic_ports_[slot].link[port].serialization(bytes, packet_bytes_);
  }
  bool nic_nvlink(std::uint32_t slot, std::uint32_t port) const { return nic_ports_[slot].nvlink[port]; }
  // Called by forward() (in a sequential run the commit follows at once): starts the cache misses of what
  // the component's commit will read. Records nothing.
  void prefetch_gpu(std::uint32_t slot) const {
    recorder_->prefetch({gpu_, slot});
    recorder_->prefetch_gauge({gpu_, slot}, gpu_metric::kCommWait);
  }
  void prefetch_nic(std::uint32_t slot) const {
    recorder_->prefetch({nic_, slot});
    __builtin_prefetch(&nic_ports_[slot]);
  }
  void prefetch_port(std::uint32_t local) const {
    recorder_->prefetch({port_, local});
    __builtin_prefetch(&port_links_[local]);
  }

 private:
  struct Link {
    double gbps = 0;
    SimTime full_packet_ps = 0;  // serialization_ps(packet_bytes_, gbps)
    SimTime serialization(std::uint64_t bytes, std::uint64_t packet_bytes) const {
      return bytes == packet_bytes ? full_packet_ps : serialization_ps(bytes, gbps);
    }
  };
  Link link_of(double gbps) const { return Link{gbps, serialization_ps(packet_bytes_, gbps)}; }
  struct NicPorts {
    Link link[2];
    bool nvlink[2] = {false, false};
  };
  SeriesRecorder* recorder_;
  const Topology& topo_;
  SeriesRecorder::KindId gpu_ = 0, nic_ = 0, port_ = 0, storage_ = 0;
  std::uint64_t packet_bytes_;       // the topology's packet size
  std::vector<Link> port_links_;     // [local switch-port component]
  std::vector<NicPorts> nic_ports_;  // [local NIC component]
};

}  // namespace warpsim::cluster
