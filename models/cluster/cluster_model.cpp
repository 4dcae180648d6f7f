// The cluster model (see cluster_model.hpp).
#include "models/cluster/cluster_model.hpp"

#include <vector>

#include "models/cluster/cluster_events.hpp"

namespace warpsim::cluster {

ClusterModel::ClusterModel(const ClusterParams& params, std::shared_ptr<const GpuProgram> program)
    : topo_(make_topology(params)),
      gpu_(*topo_, std::move(program)),
      nic_(*topo_),
      switch_(*topo_),
      storage_(*topo_),
      flow_nic_(*topo_),
      flow_net_(*topo_) {
  // The registration order is the type index (0 gpu .. 5 flow_network), which checkpoints record: append
  // new types last. Under flow fidelity the NICs are FlowNicLps; the packet NIC type stays registered
  // (claiming no LP) so the indices do not depend on the fidelity.
  using K = LpKind;
  const bool flow = topo_->has_flow_network();
  types_.add(gpu_, {K::kGpu});
  types_.add(nic_, flow ? std::vector<K>{} : std::vector<K>{K::kNic});
  types_.add(switch_, {K::kNvSwitch, K::kLeaf, K::kTier1, K::kCore, K::kRouter});
  types_.add(storage_, {K::kStorage});
  types_.add(flow_nic_, flow ? std::vector<K>{K::kNic} : std::vector<K>{});
  types_.add(flow_net_, {K::kFlowNetwork});
}

void ClusterModel::record_series(SeriesRecorder& recorder) {
  series_ = std::make_unique<ClusterSeries>(recorder, *topo_);
  gpu_.set_series(series_.get());
  nic_.set_series(series_.get());
  switch_.set_series(series_.get());
  storage_.set_series(series_.get());
}

std::size_t ClusterModel::payload_bytes() const {
  return kMaxPayloadBytes;
}

}  // namespace warpsim::cluster
