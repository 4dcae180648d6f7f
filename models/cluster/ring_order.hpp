// Rail-aligned ring orders, the way NCCL lays its rings out on a fabric with one NIC per GPU and one
// network rail per NIC (NCCL_CROSS_NIC=0: a ring enters and leaves a node on the same rail, so the
// inter-node hop of a channel never leaves its rail's leaf switch and never meets ECMP on the spines).
//
// The group is `nodes` blocks of `local` consecutive ranks (rank = node x local + local index). Channel c
// visits node 0 in local order c, c+1, ..., c-1 (mod local), leaves it at local index c-1 and enters node 1
// at the same local index c-1, which it visits downwards (c-1, c-2, ..., c); node 2 again upwards from c, and
// so on: every inter-node hop joins equal local indices, i.e. stays on one rail. With an even node count
// the wrap-around hop (last node -> node 0) is on a rail too; with an odd count it joins local c-1 to c
// (one cross-rail hop per channel; NCCL avoids it with PXN, which this model does not have).
// Channel c's exit GPU differs per channel, so with one channel per rail every NIC carries the network
// traffic of exactly one channel, and each GPU sends to its NVLink neighbour in the other channels.
// With one node, or one rank per node, every channel is the identity order (the flat ring).
#pragma once

#include <cstdint>

namespace warpsim::cluster {

class RailRings {
 public:
  // `local` ranks per node (>= 1, must divide n), `channels` rings (0: one per rail when the group spans
  // several nodes with several ranks each, else 1).
  RailRings(std::uint32_t n, std::uint32_t local, std::uint32_t channels = 0);

  std::uint32_t channels() const { return channels_; }
  // Group rank at ring position `pos` of channel `c`, and the position of `rank` in channel `c`.
  std::uint32_t rank_at(std::uint32_t c, std::uint64_t pos) const;
  std::uint32_t position_of(std::uint32_t c, std::uint32_t rank) const;
  // Neighbours of `rank` in channel `c`: next and previous along the ring.
  std::uint32_t right(std::uint32_t c, std::uint32_t rank) const;
  std::uint32_t left(std::uint32_t c, std::uint32_t rank) const;

 private:
  std::uint32_t n_, local_, nodes_, channels_;
};

}  // namespace warpsim::cluster
