// The cluster model: a FatTree topology, one LP type per hardware kind (GPU, NIC, switch, storage) and the
// GPU program the GPUs run. Implements the engine's Model; everything is computed from the parameters,
// so a rank only instantiates the LPs the engine gives it.
#pragma once

#include <memory>

#include "engine/model.hpp"
#include "models/cluster/cluster_params.hpp"
#include "models/cluster/fat_tree.hpp"
#include "models/cluster/gpu_lp.hpp"
#include "models/cluster/gpu_program.hpp"
#include "models/cluster/nic_lp.hpp"
#include "models/cluster/storage_lp.hpp"
#include "models/cluster/switch_lp.hpp"

namespace warpsim::cluster {

class ClusterModel final : public Model {
 public:
  ClusterModel(const ClusterParams& params, std::shared_ptr<const GpuProgram> program);

  std::uint64_t lp_count() const override { return topo_.lp_count(); }
  std::size_t type_count() const override { return 4; }
  LpType& type(std::size_t index) override;
  std::size_t type_of(LpId lp) const override;
  std::size_t payload_bytes() const override;
  SimTime lookahead() const override { return topo_.min_latency(); }

  const FatTree& topology() const { return topo_; }
  const GpuLp& gpus() const { return gpu_; }
  const NicLp& nics() const { return nic_; }
  const SwitchLp& switches() const { return switch_; }
  const StorageLp& storage() const { return storage_; }

 private:
  FatTree topo_;
  GpuLp gpu_;
  NicLp nic_;
  SwitchLp switch_;
  StorageLp storage_;
};

}  // namespace warpsim::cluster
