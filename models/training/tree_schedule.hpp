// The data-parallel tree all-reduce as the training adapter runs it: cluster::TreeAllReduce (the pipelined
// double binary tree of models/cluster/tree_collectives.hpp) plus the one figure the adapter's stage-uniform
// prefix tables need, the op count padded to the longest member's. Members with fewer ops end with no-op
// Waits (a Wait with nothing outstanding passes within the same GPU event, so the padding costs op
// lookups, not events).
//
// TreeAllReduce's constructor walks all n positions once (tree depth) and the padded count needs every
// member's length, so schedules are memoized per thread by (n, bytes, chunk, members per node): a training
// step has a handful of distinct bucket sizes, and the hot path (one lookup per GPU op) finds them in a short
// list.
#pragma once

#include <cstdint>
#include <optional>

#include "models/cluster/tree_collectives.hpp"

namespace warpsim::training {

class TreeSchedule {
 public:
  // `per_node`: members per node for NCCL's chained tree (cluster::TreeAllReduce), 1 for the flat tree.
  TreeSchedule(std::uint32_t n, std::uint64_t bytes, std::uint64_t chunk_bytes, std::uint32_t per_node = 1);

  std::uint32_t members() const { return n_; }
  std::uint32_t per_node() const { return per_node_; }
  std::uint64_t bytes() const { return bytes_; }
  std::uint64_t chunk_bytes() const { return chunk_bytes_; }
  // Ops of member `rank` before padding, and the padded count every member runs.
  std::uint64_t ops(std::uint32_t rank) const;
  std::uint64_t padded_ops() const { return padded_; }
  // Op `index` (< padded_ops) of member `rank`; peers are group positions. Waits beyond ops(rank).
  cluster::RankOp op(std::uint32_t rank, std::uint64_t index) const;

 private:
  std::uint32_t n_, per_node_;
  std::uint64_t bytes_, chunk_bytes_;
  cluster::TreeAllReduce tree_;
  std::uint64_t padded_ = 0;
};

// The memoized schedule for (n, bytes, chunk, per_node) on this thread. The reference stays valid until the
// next call on this thread that has to build a new schedule while the memo is full (callers use it at once).
const TreeSchedule& tree_schedule(std::uint32_t n, std::uint64_t bytes, std::uint64_t chunk_bytes,
                                  std::uint32_t per_node = 1);

}  // namespace warpsim::training
