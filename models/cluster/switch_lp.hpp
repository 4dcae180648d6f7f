// Switch logical process (leaf, spine/aggregation, core, and the per-node NVSwitch): store-and-forward
// (or cut-through: the port may start on a packet once its head is in) with one FIFO output queue per port. A
// packet that has fully arrived waits network.switch_latency_ns, then queues behind the port's backlog (the
// port's busy horizon), serializes at the port's link bandwidth and reaches the next hop after the link
// latency. Queue depth is derived from the busy horizon, so congestion and incast emerge without per-packet
// queue entries in state. The fabric is lossless: a packet that would exceed network.switch_buffer_bytes is
// counted as an overflow (where a real fabric would pause the sender), not dropped.
#pragma once

#include <cstdint>
#include <vector>

#include "models/cluster/cluster_lp_type.hpp"

namespace warpsim::cluster {

struct SwitchPort {
  SimTime busy_until = 0;  // when the last queued packet finishes serializing
  std::uint64_t bytes_tx = 0;
  std::uint64_t max_depth_bytes = 0;  // largest backlog seen by an arriving packet, itself included
  SimTime busy_ps = 0;                // total serialization time
};
struct SwitchState {
  LpId id = 0;
  std::uint64_t packets = 0;
  std::uint64_t overflows = 0;  // packets that found the port buffer full
  std::vector<SwitchPort> ports;
};

class SwitchLp final : public ClusterLpType<SwitchState> {
 public:
  using Port = SwitchPort;
  using State = SwitchState;

  explicit SwitchLp(const Topology& topology) : ClusterLpType(topology) {}
  std::string_view name() const override { return "switch"; }
  // For the memory report: the fixed part plus the ports of a radix-64 switch (the vector is per LP).
  std::size_t state_bytes() const override { return sizeof(State) + 64 * sizeof(Port); }
  void forward(std::uint32_t slot, LpContext& ctx) override;
  void reverse(std::uint32_t slot, LpContext& ctx) override;
  void commit(std::uint32_t slot, LpContext& ctx) override;
  std::uint64_t digest(std::uint32_t slot) const override;
  void save(std::uint32_t slot, std::ostream& out) const override;
  void load(std::uint32_t slot, std::istream& in) override;

 private:
  State make_state(LpId id) override;
  void on_added(std::uint32_t, LpId id) override {
    if (series_ != nullptr) port0_.push_back(series_->add_switch(id));
  }
  // When a packet whose tail arrived at `tail_arrival` may start on its output port: after the switch
  // latency, counted from the tail (store-and-forward) or from the head (network.switching cut_through).
  SimTime ready_time(SimTime tail_arrival, std::uint32_t in_ser_ps) const;
  // Backlog (bytes) an arriving packet of `bytes` finds at port, itself included, when ready at `ready`.
  static std::uint64_t depth(SimTime busy_until, SimTime ready, double gbps, std::uint64_t bytes);

  std::vector<std::uint32_t> port0_;  // [slot] -> series component of the switch's port 0
};

}  // namespace warpsim::cluster
