// Per-component time series of the cluster model (docs/hdf5-layout.md): declares the kinds "gpu", "nic",
// "switch_port" and "storage" with their metrics, units and topology columns in a SeriesRecorder, and
// registers each LP's components as the engine hands LPs to a rank. The LP types record from their
// commit() handlers only (committed events are final), through the metric indices below.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/series_recorder.hpp"
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
  // Declares the four kinds (every rank, same order). Numbers every switch port of the topology.
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

 private:
  SeriesRecorder* recorder_;
  const Topology& topo_;
  SeriesRecorder::KindId gpu_ = 0, nic_ = 0, port_ = 0, storage_ = 0;
  // Switch LPs in ascending id and the global id of each one's port 0 (dense numbering of all ports).
  std::vector<LpId> switch_lps_;
  std::vector<std::uint64_t> port_base_;
};

}  // namespace warpsim::cluster
