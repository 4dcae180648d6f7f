// NIC logical process of the flow fidelity: hands each message posted by its GPU to the flow network as
// one flow, after the latency of the NIC's first link (the packet model's NIC instead segments it into
// packets). Counts messages and bytes sent.
#pragma once

#include <cstdint>

#include "models/cluster/cluster_lp_type.hpp"

namespace warpsim::cluster {

struct FlowNicState {
  LpId id = 0;
  std::uint64_t messages_tx = 0;
  std::uint64_t bytes_tx = 0;
};

class FlowNicLp final : public ClusterLpType<FlowNicState> {
 public:
  using State = FlowNicState;

  explicit FlowNicLp(const Topology& topology) : ClusterLpType(topology) {}
  std::string_view name() const override { return "flow_nic"; }
  void forward(std::uint32_t slot, LpContext& ctx) override;
  void reverse(std::uint32_t slot, LpContext& ctx) override;
  std::uint64_t digest(std::uint32_t slot) const override;
  void save(std::uint32_t slot, std::ostream& out) const override;
  void load(std::uint32_t slot, std::istream& in) override;
};

}  // namespace warpsim::cluster
