// Storage target logical process (one parallel-file-system target): requests queue behind the target's
// aggregate bandwidth, one client's request is never served faster than the per-client bandwidth, and the
// request latency is paid each way. Storage traffic does not cross the simulated fabric (simplification).
#pragma once

#include <cstdint>

#include "models/cluster/cluster_lp_type.hpp"

namespace warpsim::cluster {

struct StorageState {
  LpId id = 0;
  SimTime busy_until = 0;
  std::uint64_t requests = 0;
  std::uint64_t bytes_read = 0, bytes_written = 0;
  SimTime busy_ps = 0;
};

class StorageLp final : public ClusterLpType<StorageState> {
 public:
  using State = StorageState;

  explicit StorageLp(const Topology& topology) : ClusterLpType(topology) {}
  std::string_view name() const override { return "storage"; }
  void forward(std::uint32_t slot, LpContext& ctx) override;
  void reverse(std::uint32_t slot, LpContext& ctx) override;
  void commit(std::uint32_t slot, LpContext& ctx) override;
  std::uint64_t digest(std::uint32_t slot) const override;
  void save(std::uint32_t slot, std::ostream& out) const override;
  void load(std::uint32_t slot, std::istream& in) override;

 private:
  void on_added(std::uint32_t, LpId id) override {
    if (series_ != nullptr) series_->add_storage(id);  // component local index == slot
  }
};

}  // namespace warpsim::cluster
