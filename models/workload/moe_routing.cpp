// Skewed token routing from the counter-based generator (see moe_routing.hpp).
#include "models/workload/moe_routing.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "engine/random.hpp"

namespace warpsim::workload {

MoeRouting::MoeRouting(std::uint32_t experts, std::uint32_t ep, std::uint32_t top_k, double skew,
                       std::uint64_t seed)
    : experts_(experts), ep_(ep), top_k_(top_k), skew_(skew), seed_(seed) {
  if (experts_ == 0 || ep_ == 0 || experts_ % ep_ != 0 || top_k_ == 0 || top_k_ > experts_ || !(skew_ >= 0) ||
      !std::isfinite(skew_)) {
    throw std::invalid_argument("MoeRouting: invalid experts/ep/top_k/skew");
  }
}

std::vector<double> MoeRouting::expert_shares(const RouteKey& key) const {
  std::vector<double> w(experts_, 1.0 / experts_);
  if (skew_ == 0) return w;
  // One stream per key: (layer, step) in the stream's high word, (micro-batch, group) in its low one.
  Rng rng(seed_, key.layer ^ (key.step << 16) ^ 0x4d6f4500u,
          (std::uint64_t{key.step} << 48) ^ (std::uint64_t{key.microbatch} << 32) ^ key.group);
  double sum = 0;
  for (std::uint32_t e = 0; e < experts_; e += 2) {
    // Box-Muller: two standard normals from two uniforms in (0, 1].
    const double r = std::sqrt(-2.0 * std::log(rng.uniform()));
    const double a = 2.0 * std::numbers::pi * rng.uniform();
    w[e] = std::exp(skew_ * r * std::cos(a));
    if (e + 1 < experts_) w[e + 1] = std::exp(skew_ * r * std::sin(a));
  }
  for (const double x : w) sum += x;
  for (double& x : w) x /= sum;
  // An expert takes at most 1/k of the pairs (each of the T tokens picks it at most once): cap, hand the
  // excess to the uncapped experts in proportion, repeat until none exceeds the cap.
  const double cap = 1.0 / top_k_;
  for (std::uint32_t round = 0; round < experts_; ++round) {
    double excess = 0, free = 0;
    for (double& x : w) {
      if (x > cap) {
        excess += x - cap;
        x = cap;
      } else if (x < cap) {
        free += x;
      }
    }
    if (excess <= 0 || free <= 0) break;
    for (double& x : w) {
      if (x < cap) x += excess * x / free;
    }
  }
  return w;
}

double MoeRouting::share(const RouteKey& key, std::uint32_t member) const {
  if (balanced()) return 1.0 / ep_;
  // A GPU asks for the shares of its whole expert group, for each of its routed ops and all-to-all
  // sub-ops in turn: keep the last few keys' member shares (a pure memo; results do not depend on it).
  struct Entry {
    RouteKey key;
    std::uint32_t experts = 0, ep = 0, top_k = 0;
    double skew = 0;
    std::uint64_t seed = 0;
    std::vector<double> shares;
  };
  thread_local std::array<Entry, 64> cache;
  Entry& slot = cache[(key.layer * 31u + key.step * 17u + key.microbatch * 7u + key.group) % cache.size()];
  if (!(slot.key == key) || slot.experts != experts_ || slot.ep != ep_ || slot.top_k != top_k_ ||
      slot.skew != skew_ || slot.seed != seed_) {
    const std::vector<double> w = expert_shares(key);
    slot.shares.assign(ep_, 0.0);
    const std::uint32_t local = experts_ / ep_;
    for (std::uint32_t e = 0; e < experts_; ++e) slot.shares[e / local] += w[e];
    slot.key = key;
    slot.experts = experts_;
    slot.ep = ep_;
    slot.top_k = top_k_;
    slot.skew = skew_;
    slot.seed = seed_;
  }
  return slot.shares[member];
}

}  // namespace warpsim::workload
