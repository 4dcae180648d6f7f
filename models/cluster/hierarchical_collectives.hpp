// Two-level (intra-node, then inter-node) collective schedules over group ranks 0..n-1, where nodes are
// `local` consecutive ranks and rail l is the set of ranks with local index l (one per node). Like the tree
// schedules, op i of rank r is computed on demand with peers as group ranks. Every phase is a ring of
// steps of three ops (send, receive, wait; tag = the step number over the whole schedule), so a ring moves
// one slice per step and pipelines over the ring's slices; a phase on NVLink and one on the network run one
// after the other.
//
// With L = local, M = n / L nodes and S the nccl-tests size (the all-reduce buffer, the reduce-scatter
// input, the all-gather output), each order keeps the inter-node bytes at S/L per rank:
//   all-reduce:     in-node reduce-scatter (S), per-rail all-reduce across nodes (S/L), in-node all-gather;
//                   sends 2(L-1)/L S on NVLink and 2(M-1)/M S/L on the network per rank;
//   reduce-scatter: in-node reduce-scatter (S), per-rail reduce-scatter across nodes (S/L);
//                   sends (L-1)/L S + (M-1)/M S/L per rank;
//   all-gather:     per-rail all-gather across nodes (S/L), in-node all-gather (S); same bytes as RS.
// Uncongested time: the sum of the phases' ring times, (steps x latency + bytes / bandwidth) each.
//
// Broadcast (HierarchicalBroadcast, root = rank 0): the node leaders (local index 0) form a chain across
// the nodes on rail 0, and each node a chain over NVLink from its leader; chunks are pipelined down this
// comb (receive chunk c, wait, forward it), so the network carries S once per node and the pipeline is
// (M-1) + (L-1) hops deep instead of the flat ring's n-1.
#pragma once

#include <cstdint>
#include <optional>

#include "models/cluster/tree_collectives.hpp"

namespace warpsim::cluster {

class HierarchicalSchedule {
 public:
  enum class Kind { kAllReduce, kReduceScatter, kAllGather };
  // `local`: ranks per node (>= 1, n must be a multiple).
  HierarchicalSchedule(Kind kind, std::uint32_t n, std::uint32_t local, std::uint64_t bytes);
  std::optional<RankOp> op(std::uint32_t rank, std::uint64_t index) const;
  // Ring steps of the whole schedule (every rank runs all of them).
  std::uint64_t steps() const;

 private:
  Kind kind_;
  std::uint32_t n_, local_, nodes_;
  std::uint64_t bytes_;
};

class HierarchicalBroadcast {
 public:
  HierarchicalBroadcast(std::uint32_t n, std::uint32_t local, std::uint64_t bytes, std::uint64_t chunk_bytes);
  std::optional<RankOp> op(std::uint32_t rank, std::uint64_t index) const;
  std::uint64_t chunks() const { return chunks_; }

 private:
  std::uint32_t n_, local_, nodes_;
  std::uint64_t bytes_, chunk_bytes_, chunks_;
};

}  // namespace warpsim::cluster
