// What the cluster's LP types share beyond the slotted base: the topology they route and time on, the
// optional time-series sink, and a checkpoint record of their own (lp_checkpoint.cpp writes each State
// field by field, so every cluster type is checkpointable whatever its State's layout).
#pragma once

#include "engine/slotted_lp_type.hpp"
#include "models/cluster/cluster_series.hpp"
#include "models/cluster/topology.hpp"

namespace warpsim::cluster {

template <class State>
class ClusterLpType : public SlottedLpType<State> {
 public:
  explicit ClusterLpType(const Topology& topology) : topo_(topology) {}
  bool checkpointable() const override { return true; }
  // Time series (null = none); set before the engine adds LPs. Types that record none ignore it.
  void set_series(ClusterSeries* series) { series_ = series; }

 protected:
  const Topology& topo_;
  ClusterSeries* series_ = nullptr;
};

}  // namespace warpsim::cluster
