// Storage target logical process (one parallel-file-system target): requests queue behind the target's
// aggregate bandwidth, one client's request is never served faster than the per-client bandwidth, and the
// request latency is paid each way. Storage traffic does not cross the simulated fabric (simplification).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/lp_type.hpp"
#include "models/cluster/cluster_series.hpp"
#include "models/cluster/topology.hpp"

namespace warpsim::cluster {

class StorageLp final : public LpType {
 public:
  struct State {
    LpId id = 0;
    SimTime busy_until = 0;
    std::uint64_t requests = 0;
    std::uint64_t bytes_read = 0, bytes_written = 0;
    SimTime busy_ps = 0;
  };

  explicit StorageLp(const Topology& topology) : topo_(topology) {}
  std::string_view name() const override { return "storage"; }
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

  const State& state(std::uint32_t slot) const { return states_[slot]; }
  std::optional<std::uint32_t> slot_of(LpId id) const;

 private:
  const Topology& topo_;
  std::vector<State> states_;
  ClusterSeries* series_ = nullptr;
};

}  // namespace warpsim::cluster
