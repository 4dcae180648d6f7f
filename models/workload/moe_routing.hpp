// Token-routing imbalance of a mixture-of-experts layer (model.moe_routing_skew), as a pure function of a
// routing key so that every GPU, on any MPI rank count and partition, sees the same draw.
//
// Model: per key (layer, step, micro-batch, expert group), each of the E routed experts gets a popularity
// w_e = exp(skew * z_e), z_e standard normal from the engine's counter-based generator (Philox4x32-10,
// engine/random.hpp) keyed by (moe_routing_seed, key). Every GPU of the expert group routes its T*k
// token-expert pairs in these proportions, an expert taking at most T of one GPU's tokens (top-k picks
// distinct experts; the excess is redistributed over the others in proportion to their popularity). The
// share of the pairs that lands on expert-parallel member m is the sum over its experts. skew 0 is exact
// balance (1/EP each) and takes no draws. docs/workload.md "Routing imbalance".
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace warpsim::workload {

struct RouteKey {
  std::uint32_t layer = 0, step = 0, microbatch = 0;
  std::uint32_t group = 0;  // the expert group's first GPU rank (which data-parallel replicas it serves)
  bool operator==(const RouteKey&) const = default;
};

class MoeRouting {
 public:
  MoeRouting() = default;
  // experts: routed experts; ep: expert-parallel degree (divides experts); top_k per token; skew >= 0.
  MoeRouting(std::uint32_t experts, std::uint32_t ep, std::uint32_t top_k, double skew, std::uint64_t seed);

  bool balanced() const { return skew_ == 0 || ep_ <= 1; }
  std::uint32_t members() const { return ep_; }
  // The share of each GPU's token-expert pairs that goes to member m (sums to 1 over the EP members).
  double share(const RouteKey& key, std::uint32_t member) const;
  // Every expert's share of the pairs (sums to 1), for tests and reports.
  std::vector<double> expert_shares(const RouteKey& key) const;

 private:
  std::uint32_t experts_ = 1, ep_ = 1, top_k_ = 1;
  double skew_ = 0;
  std::uint64_t seed_ = 0;
};

}  // namespace warpsim::workload
