// NIC logical process of the flow fidelity: hands each message posted by its GPU to the flow network as
// one flow, after the latency of the NIC's first link (the packet model's NIC instead segments it into
// packets). Counts messages and bytes sent.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/lp_type.hpp"
#include "models/cluster/topology.hpp"

namespace warpsim::cluster {

class FlowNicLp final : public LpType {
 public:
  struct State {
    LpId id = 0;
    std::uint64_t messages_tx = 0;
    std::uint64_t bytes_tx = 0;
  };

  explicit FlowNicLp(const Topology& topology) : topo_(topology) {}
  std::string_view name() const override { return "flow_nic"; }
  std::size_t state_bytes() const override { return sizeof(State); }
  std::uint32_t add_lp(LpId id) override;
  void init(std::uint32_t, LpContext&) override {}
  void forward(std::uint32_t slot, LpContext& ctx) override;
  void reverse(std::uint32_t slot, LpContext& ctx) override;
  std::uint64_t digest(std::uint32_t slot) const override;
  bool checkpointable() const override { return true; }
  void save(std::uint32_t slot, std::ostream& out) const override;
  void load(std::uint32_t slot, std::istream& in) override;

  std::size_t size() const { return states_.size(); }
  const State& state(std::uint32_t slot) const { return states_[slot]; }

 private:
  const Topology& topo_;
  std::vector<State> states_;
};

}  // namespace warpsim::cluster
