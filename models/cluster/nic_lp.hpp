// NIC logical process: segments each posted message into packets of network.packet_bytes, serializes them
// back to back on the egress port (scale-out to the leaf, or NVLink to the node's NVSwitch), and on the
// receive side counts arriving packets and tells the GPU when a message's last packet is in. One message
// in flight is a chain of self-events carrying its offset, so concurrent messages share the port packet
// by packet and the NIC keeps no queue in its state.
#pragma once

#include <array>
#include <cstdint>

#include "models/cluster/cluster_lp_type.hpp"

namespace warpsim::cluster {

struct NicState {
  LpId id = 0;
  std::array<SimTime, 2> busy_until{};  // per egress port: when its last packet finishes serializing
  std::uint64_t bytes_tx = 0, bytes_rx = 0;
  std::uint64_t packets_tx = 0, packets_rx = 0;
  std::uint64_t messages_tx = 0, messages_rx = 0;
  SimTime busy_ps = 0;  // total serialization time
};

class NicLp final : public ClusterLpType<NicState> {
 public:
  using State = NicState;

  explicit NicLp(const Topology& topology) : ClusterLpType(topology) {}
  std::string_view name() const override { return "nic"; }
  void forward(std::uint32_t slot, LpContext& ctx) override;
  void reverse(std::uint32_t slot, LpContext& ctx) override;
  void commit(std::uint32_t slot, LpContext& ctx) override;
  std::uint64_t digest(std::uint32_t slot) const override;
  void save(std::uint32_t slot, std::ostream& out) const override;
  void load(std::uint32_t slot, std::istream& in) override;

 private:
  void on_added(std::uint32_t, LpId id) override {
    if (series_ != nullptr) series_->add_nic(id);  // component local index == slot
  }
};

}  // namespace warpsim::cluster
