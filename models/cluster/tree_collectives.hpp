// Tree schedules over group ranks 0..n-1: op i of rank r is computed on demand, with peers as group ranks,
// so both the `collective` micro-benchmark (CollectiveProgram) and a workload adapter can map them onto
// their own GPUs and tags. (The two-level ring schedules are in hierarchical_collectives.hpp.)
//
// Double binary tree: two binary trees over the ranks, each carrying half the buffer in chunks (pipelined:
// a rank forwards chunk c while the next level already handles chunk c+1; stages are skewed by tree level
// so that one program with one kind of wait serves both trees without stalls). Tree A is an in-order tree
// on positions: position p with lowest set bit b has children p - b/2 and p + b/2 (the right one shrinks
// towards p while out of range); odd positions are leaves; position 0 is the root, with the highest power
// of two below n as its only child. Tree B places rank r at position n-1-r (n even) or (r+1) mod n (n odd),
// so tree A's leaves are tree B's inner ranks and every rank receives and sends about S per phase.
//
// All-reduce: each tree reduces its half up, then broadcasts it down:
// time ~ 2 S/B + 4 depth x chunk/B + latencies.
// With several group ranks per node (`per_node` L > 1: rank r on node r / L at local index r % L), NCCL's
// tree: the double binary tree runs over the nodes, and inside a node the GPUs form a chain over NVLink
// (NCCL's NCCL_TOPO_PATTERN_TREE: the chain's first GPU talks to the parent and child nodes). NCCL runs
// one such tree per channel, the chain starting at another GPU on each, so that every NIC carries a share.
// Here: L channels, channel j with both trees of the pair, chain j, j+1, ..., j+L-1 (mod L), its inter-node
// edges between the local-j GPUs of the nodes (one rail); 2L trees, each carrying bytes / 2L. L = 1 is the
// flat double binary tree above.
// Broadcast (root = rank 0): half A goes down tree A from its root, rank 0; half B goes from rank 0 to tree
// B's root (rank n-1), then down tree B, where rank 0 is a leaf that already has the data and is skipped.
// Every rank sends and receives about S: time ~ S/B + pipeline fill (see docs/validation.md), with a
// latency of about log2(n) hops instead of the ring's n-1.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "models/cluster/gpu_program.hpp"

namespace warpsim::cluster {

// One op of a schedule; `peer` is a group rank (kSend/kRecv).
struct RankOp {
  OpKind kind = OpKind::kWait;
  std::uint32_t peer = 0;
  std::uint64_t bytes = 0;
  std::uint32_t tag = 0;
};

// Size of part `index` of `bytes` cut into `parts` near-equal parts (the first bytes % parts get one more).
inline std::uint64_t slice_bytes(std::uint64_t bytes, std::uint64_t parts, std::uint64_t index) {
  return bytes / parts + (index < bytes % parts ? 1 : 0);
}

// Links of tree position `p` of the in-order binary tree on positions 0..n-1 (-1: none).
struct TreeLinks {
  std::int64_t parent = -1;
  std::array<std::int64_t, 2> children{-1, -1};
};
TreeLinks binary_tree_links(std::uint32_t n, std::uint32_t position);
// Position of `rank` in tree 0 (A) or 1 (B) of the double binary tree, and the inverse.
std::uint32_t tree_position(std::uint32_t n, std::uint32_t tree, std::uint32_t rank);
std::uint32_t tree_rank(std::uint32_t n, std::uint32_t tree, std::uint32_t position);
// Levels below the root of the in-order tree (0 for n == 1).
std::uint32_t binary_tree_depth(std::uint32_t n);

// Links of group rank `rank` in tree `tree` (0 .. 2L-1) of the (chained) double binary tree over n = nodes
// x L ranks, as group ranks (-1: none); the chain's next GPU is the first child. `depth`: hops to the root.
struct ChainTreeLinks {
  std::int64_t parent = -1;
  std::array<std::int64_t, 3> children{-1, -1, -1};
  std::uint32_t depth = 0;
};
ChainTreeLinks chain_tree_links(std::uint32_t n, std::uint32_t per_node, std::uint32_t tree,
                                std::uint32_t rank);

class TreeAllReduce {
 public:
  // std::invalid_argument when per_node is 0 or does not divide n.
  TreeAllReduce(std::uint32_t n, std::uint64_t bytes, std::uint64_t chunk_bytes, std::uint32_t per_node = 1);
  std::optional<RankOp> op(std::uint32_t rank, std::uint64_t index) const;
  std::uint64_t chunks() const { return chunks_; }
  std::uint32_t trees() const { return 2 * per_node_; }

 private:
  std::uint64_t chunk_size(std::uint32_t tree, std::uint64_t chunk) const;

  std::uint32_t n_;
  std::uint32_t per_node_;
  std::uint64_t bytes_;
  std::uint64_t chunk_bytes_;
  std::uint64_t chunks_;
  std::uint64_t depth_;  // levels below the root, chains included
};

// Pipelined broadcast from rank 0 down the double binary tree (see the file comment).
class TreeBroadcast {
 public:
  TreeBroadcast(std::uint32_t n, std::uint64_t bytes, std::uint64_t chunk_bytes);
  std::optional<RankOp> op(std::uint32_t rank, std::uint64_t index) const;
  std::uint64_t chunks() const { return chunks_; }  // per tree

 private:
  std::uint64_t chunk_size(std::uint32_t tree, std::uint64_t chunk) const;

  std::uint32_t n_;
  std::array<std::uint64_t, 2> half_;
  std::uint64_t chunk_bytes_;
  std::uint64_t chunks_;
};

}  // namespace warpsim::cluster
