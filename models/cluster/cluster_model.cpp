// The cluster model (see cluster_model.hpp).
#include "models/cluster/cluster_model.hpp"

#include <stdexcept>

#include "models/cluster/cluster_events.hpp"

namespace warpsim::cluster {

ClusterModel::ClusterModel(const ClusterParams& params, std::shared_ptr<const GpuProgram> program)
    : topo_(make_topology(params)),
      gpu_(*topo_, std::move(program)),
      nic_(*topo_),
      switch_(*topo_),
      storage_(*topo_),
      flow_nic_(*topo_),
      flow_net_(*topo_) {}

void ClusterModel::record_series(SeriesRecorder& recorder) {
  series_ = std::make_unique<ClusterSeries>(recorder, *topo_);
  gpu_.set_series(series_.get());
  nic_.set_series(series_.get());
  switch_.set_series(series_.get());
  storage_.set_series(series_.get());
}

LpType& ClusterModel::type(std::size_t index) {
  switch (index) {
    case 0:
      return gpu_;
    case 1:
      return nic_;
    case 2:
      return switch_;
    case 3:
      return storage_;
    case 4:
      return flow_nic_;
    case 5:
      return flow_net_;
    default:
      throw std::out_of_range("cluster model: no LP type " + std::to_string(index));
  }
}

std::size_t ClusterModel::type_of(LpId lp) const {
  switch (topo_->kind_of(lp)) {
    case LpKind::kGpu:
      return 0;
    case LpKind::kNic:
      return topo_->has_flow_network() ? 4 : 1;
    case LpKind::kStorage:
      return 3;
    case LpKind::kFlowNetwork:
      return 5;
    default:
      return 2;
  }
}

std::size_t ClusterModel::payload_bytes() const {
  return kMaxPayloadBytes;
}

}  // namespace warpsim::cluster
