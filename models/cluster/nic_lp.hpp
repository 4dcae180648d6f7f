// NIC logical process: segments each posted message into packets of network.packet_bytes, serializes them
// back to back on the egress port (scale-out to the leaf, or NVLink to the node's NVSwitch), and on the
// receive side counts arriving packets and tells the GPU when a message's last packet is in. One message
// in flight is a chain of self-events carrying its offset, so concurrent messages share the port packet
// by packet and the NIC keeps no queue in its state.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "engine/lp_type.hpp"
#include "models/cluster/cluster_series.hpp"
#include "models/cluster/topology.hpp"

namespace warpsim::cluster {

class NicLp final : public LpType {
 public:
  struct State {
    LpId id = 0;
    std::array<SimTime, 2> busy_until{};  // per egress port: when its last packet finishes serializing
    std::uint64_t bytes_tx = 0, bytes_rx = 0;
    std::uint64_t packets_tx = 0, packets_rx = 0;
    std::uint64_t messages_tx = 0, messages_rx = 0;
    SimTime busy_ps = 0;  // total serialization time
  };

  explicit NicLp(const Topology& topology) : topo_(topology) {}
  std::string_view name() const override { return "nic"; }
  std::size_t state_bytes() const override { return sizeof(State); }
  std::uint32_t add_lp(LpId id) override;
  void init(std::uint32_t, LpContext&) override {}
  void forward(std::uint32_t slot, LpContext& ctx) override;
  void reverse(std::uint32_t slot, LpContext& ctx) override;
  void commit(std::uint32_t slot, LpContext& ctx) override;
  std::uint64_t digest(std::uint32_t slot) const override;
  bool checkpointable() const override { return true; }
  void save(std::uint32_t slot, std::ostream& out) const override;
  void load(std::uint32_t slot, std::istream& in) override;
  // Time series (null = none); set before the engine adds LPs.
  void set_series(ClusterSeries* series) { series_ = series; }

  std::size_t size() const { return states_.size(); }
  const State& state(std::uint32_t slot) const { return states_[slot]; }
  std::optional<std::uint32_t> slot_of(LpId id) const;

 private:
  const Topology& topo_;
  std::vector<State> states_;
  ClusterSeries* series_ = nullptr;
};

}  // namespace warpsim::cluster
