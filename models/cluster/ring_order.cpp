// Rail-aligned ring orders (see ring_order.hpp).
#include "models/cluster/ring_order.hpp"

#include <stdexcept>

namespace warpsim::cluster {

RailRings::RailRings(std::uint32_t n, std::uint32_t local, std::uint32_t channels)
    : n_(n), local_(local), nodes_(local == 0 ? 0 : n / local), channels_(channels) {
  if (n == 0 || local == 0 || n % local != 0)
    throw std::invalid_argument("ring: the group size must be a multiple of the ranks per node");
  // One node or one rank per node: nothing to align, the flat ring is the only order.
  if (nodes_ < 2 || local_ < 2) local_ = 1, nodes_ = n_;
  if (channels_ == 0) channels_ = local_;
}

std::uint32_t RailRings::rank_at(std::uint32_t c, std::uint64_t pos) const {
  const std::uint64_t L = local_, m = pos / L, j = pos % L, rail = c % L;
  const std::uint64_t l = m % 2 == 0 ? (rail + j) % L : (rail + 2 * L - 1 - j) % L;
  return static_cast<std::uint32_t>(m * L + l);
}

std::uint32_t RailRings::position_of(std::uint32_t c, std::uint32_t rank) const {
  const std::uint64_t L = local_, m = rank / L, l = rank % L, rail = c % L;
  const std::uint64_t j = m % 2 == 0 ? (l + L - rail) % L : (rail + 2 * L - 1 - l) % L;
  return static_cast<std::uint32_t>(m * L + j);
}

std::uint32_t RailRings::right(std::uint32_t c, std::uint32_t rank) const {
  return rank_at(c, (position_of(c, rank) + 1ull) % n_);
}

std::uint32_t RailRings::left(std::uint32_t c, std::uint32_t rank) const {
  return rank_at(c, (position_of(c, rank) + n_ - 1ull) % n_);
}

}  // namespace warpsim::cluster
