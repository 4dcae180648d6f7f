// The cluster model: a topology (fat-tree or torus), one LP type per hardware kind (GPU, NIC, switch,
// storage) and the GPU program the GPUs run. Under flow fidelity the NIC LPs are FlowNicLps and one more LP,
// the FlowNetworkLp, carries all traffic (switch LPs then receive no events). Implements the engine's Model;
// everything is computed from the parameters, so a rank only instantiates the LPs the engine gives it.
#pragma once

#include <memory>

#include "engine/lp_type_registry.hpp"
#include "engine/model.hpp"
#include "models/cluster/cluster_params.hpp"
#include "models/cluster/cluster_series.hpp"
#include "models/cluster/flow_network.hpp"
#include "models/cluster/flow_nic_lp.hpp"
#include "models/cluster/gpu_lp.hpp"
#include "models/cluster/gpu_program.hpp"
#include "models/cluster/nic_lp.hpp"
#include "models/cluster/storage_lp.hpp"
#include "models/cluster/switch_lp.hpp"
#include "models/cluster/topology.hpp"

namespace warpsim::cluster {

class ClusterModel final : public Model {
 public:
  ClusterModel(const ClusterParams& params, std::shared_ptr<const GpuProgram> program);

  std::uint64_t lp_count() const override { return topo_->lp_count(); }
  std::size_t type_count() const override { return types_.count(); }
  LpType& type(std::size_t index) override { return types_.type(index); }
  std::size_t type_of(LpId lp) const override { return types_.index_of(topo_->kind_of(lp)); }
  std::size_t payload_bytes() const override;
  SimTime lookahead() const override { return topo_->min_latency(); }

  const Topology& topology() const { return *topo_; }
  const GpuLp& gpus() const { return gpu_; }
  const NicLp& nics() const { return nic_; }
  const SwitchLp& switches() const { return switch_; }
  const StorageLp& storage() const { return storage_; }
  // Records per-component time series into `recorder` (declares the kinds now; call before the engine
  // is built, which adds the LPs). The recorder must outlive the model.
  void record_series(SeriesRecorder& recorder);
  const FlowNicLp& flow_nics() const { return flow_nic_; }
  const FlowNetworkLp& flow_network() const { return flow_net_; }

 private:
  std::unique_ptr<Topology> topo_;  // before the LP types, which keep a reference to it
  GpuLp gpu_;
  NicLp nic_;
  SwitchLp switch_;
  StorageLp storage_;
  std::unique_ptr<ClusterSeries> series_;
  FlowNicLp flow_nic_;
  FlowNetworkLp flow_net_;
  LpTypeRegistry<LpKind> types_;  // the types above, by index (see the constructor)
};

}  // namespace warpsim::cluster
