// Collectives as GPU programs: each GPU's op stream for a collective over a group is computed lazily from
// (gpu, op index), decomposed into Send/Recv/Wait ops. Ring algorithms: all-reduce (reduce-scatter then
// all-gather, 2(n-1) steps of S/n), all-gather and reduce-scatter (n-1 steps of S/n), broadcast (chunked
// pipeline down the ring), and all-to-all (pairwise, all posted at once). When the group spans several
// nodes with several ranks each, the rings are rail-aligned and split the buffer over one channel per rail
// (ring_order.hpp), as NCCL does: each step posts every channel's send and receive, then one wait. Tree:
// all-reduce and broadcast as a pipelined double binary tree (tree_collectives.hpp). Hierarchical:
// all-reduce, reduce-scatter and all-gather as rings inside the nodes and per-rail rings across them,
// broadcast as a pipelined chain of node leaders with a chain in each node (hierarchical_collectives.hpp).
// Reduction arithmetic is not charged as compute (it overlaps with communication on real GPUs).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "models/cluster/collective_algorithms.hpp"
#include "models/cluster/gpu_program.hpp"
#include "models/cluster/hierarchical_collectives.hpp"
#include "models/cluster/ring_order.hpp"
#include "models/cluster/tree_collectives.hpp"

namespace warpsim::cluster {

// Algorithms (which collectives each implements) are looked up in collective_algorithms.hpp.
std::optional<Collective> parse_collective(std::string_view name);
std::string_view to_string(Collective c);
// nccl-tests' bus bandwidth factor: busbw = algbw * factor(n).
double bus_factor(Collective c, std::uint32_t n);

// GPUs first, first + stride, ..., first + (count - 1) * stride; group rank = position.
struct GpuGroup {
  std::uint32_t first = 0;
  std::uint32_t count = 1;
  std::uint32_t stride = 1;

  std::optional<std::uint32_t> rank_of(std::uint32_t gpu) const;
  std::uint32_t gpu_at(std::uint32_t rank) const { return first + rank * stride; }
  std::uint64_t last_gpu() const { return first + std::uint64_t{count - 1} * stride; }
};

class CollectiveProgram final : public GpuProgram {
 public:
  // `bytes` follows nccl-tests: the all-reduce/broadcast buffer, the total all-gather output, the total
  // reduce-scatter input, the total all-to-all buffer per GPU. `chunk_bytes` pipelines the broadcasts and
  // the tree all-reduce. `local_size`: group ranks per node for the hierarchical algorithms (must divide
  // the group size; the rings use it to stay on rails, the tree all-reduce to chain a node's GPUs).
  // `channels`: rings the ring all-reduce, all-gather and reduce-scatter split the buffer over (0: one per
  // rail, see ring_order.hpp). Throws std::invalid_argument for an algorithm that does not implement
  // `collective`.
  CollectiveProgram(Collective collective, Algorithm algorithm, GpuGroup group, std::uint64_t bytes,
                    std::uint64_t chunk_bytes = 1 << 20, std::uint32_t local_size = 1,
                    std::uint32_t channels = 0);
  std::uint32_t channels() const { return rings_.channels(); }
  // NCCL's launch and protocol latency beyond the modelled wire (one Compute op of `start_ps` first on
  // every rank) and the protocol's wire bytes per data byte (nccl_tuning.hpp). Default: neither.
  void set_protocol_cost(SimTime start_ps, double wire_factor) {
    start_ps_ = start_ps;
    wire_factor_ = wire_factor;
  }
  std::optional<GpuOp> op(std::uint32_t gpu, std::uint64_t index) const override;

 private:
  std::uint64_t share(std::uint64_t chunk) const;  // size of the n-way slice `chunk`
  std::optional<GpuOp> ring_steps(std::uint32_t rank, std::uint64_t index, std::uint64_t steps) const;
  std::optional<GpuOp> all_to_all(std::uint32_t rank, std::uint64_t index) const;
  std::optional<GpuOp> broadcast(std::uint32_t rank, std::uint64_t index) const;

  std::optional<GpuOp> to_gpu_op(const std::optional<RankOp>& op) const;
  std::optional<GpuOp> schedule_op(std::uint32_t gpu, std::uint64_t index) const;

  Collective collective_;
  GpuGroup group_;
  RailRings rings_;
  std::optional<TreeAllReduce> tree_;
  std::optional<TreeBroadcast> tree_broadcast_;
  std::optional<HierarchicalSchedule> hierarchical_;
  std::optional<HierarchicalBroadcast> hierarchical_broadcast_;
  std::uint64_t bytes_;
  std::uint64_t chunk_bytes_;
  SimTime start_ps_ = 0;
  double wire_factor_ = 1;
};

}  // namespace warpsim::cluster
