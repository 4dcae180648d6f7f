// Per-kind totals of a cluster simulation on this rank (see cluster_totals.hpp).
#include "models/energy/cluster_totals.hpp"

namespace warpsim::energy {

ComponentTotals local_totals(const cluster::ClusterModel& model) {
  ComponentTotals t;
  const cluster::Topology& topo = model.topology();
  const std::uint32_t per_node = topo.params().gpus_per_node;
  const auto& gpus = model.gpus();
  for (std::uint32_t slot = 0; slot < gpus.size(); ++slot) {
    const auto& s = gpus.state(slot);
    ++t[Kind::kGpu].count;
    t[Kind::kGpu].busy_ps += s.busy_ps;
    t[Kind::kGpu].bytes += s.bytes_sent;
    if (s.gpu % per_node == 0) ++t.nodes;  // one GPU per node counts its node
  }
  const auto& nics = model.nics();
  for (std::uint32_t slot = 0; slot < nics.size(); ++slot) {
    const auto& s = nics.state(slot);
    ++t[Kind::kNic].count;
    t[Kind::kNic].busy_ps += s.busy_ps;
    t[Kind::kNic].bytes += s.bytes_tx;
  }
  const auto& switches = model.switches();
  for (std::uint32_t slot = 0; slot < switches.size(); ++slot) {
    const auto& s = switches.state(slot);
    KindTotals& k = t[topo.kind_of(s.id) == cluster::LpKind::kNvSwitch ? Kind::kNvSwitch : Kind::kSwitch];
    ++k.count;
    for (const auto& port : s.ports) {
      k.busy_ps += port.busy_ps;
      k.bytes += port.bytes_tx;
    }
  }
  // StorageLp keeps no slot count; its LPs are the storage targets' ids.
  for (std::uint32_t target = 0; target < topo.params().storage_targets; ++target) {
    const auto slot = model.storage().slot_of(topo.storage_lp(target));
    if (!slot) continue;
    const auto& s = model.storage().state(*slot);
    ++t[Kind::kStorage].count;
    t[Kind::kStorage].busy_ps += s.busy_ps;
    t[Kind::kStorage].bytes += s.bytes_read + s.bytes_written;
  }
  return t;
}

ComponentTotals inventory(const cluster::Topology& topology) {
  ComponentTotals t;
  for (LpId lp = 0; lp < topology.lp_count(); ++lp) {
    switch (topology.kind_of(lp)) {
      case cluster::LpKind::kGpu:
        ++t[Kind::kGpu].count;
        break;
      case cluster::LpKind::kNic:
        ++t[Kind::kNic].count;
        break;
      case cluster::LpKind::kNvSwitch:
        ++t[Kind::kNvSwitch].count;
        break;
      case cluster::LpKind::kLeaf:
      case cluster::LpKind::kTier1:
      case cluster::LpKind::kCore:
      case cluster::LpKind::kRouter:
        ++t[Kind::kSwitch].count;
        break;
      case cluster::LpKind::kStorage:
        ++t[Kind::kStorage].count;
        break;
      default:  // model-internal LPs (the flow network) are no hardware
        break;
    }
  }
  t.nodes = topology.params().nodes;
  return t;
}

}  // namespace warpsim::energy
