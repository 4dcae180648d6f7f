// A folder of per-rank Chakra execution traces (models/workload/chakra) as a cluster GPU program: trace rank
// r runs on GPU rank_to_gpu[r] the trace's device-side nodes, one after another in a dependency-respecting
// order (chakra::Trace::execution_order: data and control deps, ties by file position).
//   COMP_NODE        -> Compute for its recorded duration_micros; with no duration but ASTRA-sim's num_ops
//                       (and tensor_size) attributes, the compute model's time for that work (GEMM class)
//   COMM_COLL_NODE   -> the cluster expansion of the training adapter (training_program.hpp `expand`):
//                       all-reduce, all-gather, reduce-scatter (and _BLOCK), all-to-all, on the node's
//                       process group (pg_name, resolved through the given groups) or else all ranks
//   COMM_SEND / RECV -> Send / Recv+Wait to or from the peer's GPU (training_program.hpp's p2p expansion)
// Skipped, and counted: host-side nodes (is_cpu_op true: aten:: and c10d:: record functions, whose device
// work is in their own kernel nodes), metadata and memory nodes, COMP nodes with neither a duration nor
// work, the collectives the cluster model has no algorithm for (reduce, gather, scatter, broadcast,
// barrier), and sends/receives that do not name their peer (Chakra's PyTorch converter writes comm_size and
// pg_name only). All members of a group skip the same collectives, so matching is unaffected.
//
// Each rank's mapped ops are kept (a workload::Op, its group and a prefix of expanded counts: about 185
// bytes per replayed node), so op(gpu, i) is a binary search plus the arithmetic expansion, deterministic
// in (gpu, i). Memory is O(replayed nodes over all ranks); traces are finite, so this is the trace's size.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/cluster/gpu_program.hpp"
#include "models/training/training_program.hpp"
#include "models/workload/chakra/chakra_trace.hpp"
#include "models/workload/compute_model.hpp"

namespace warpsim::training {

struct TraceProgramOptions {
  std::vector<std::uint32_t> rank_to_gpu;  // [trace rank] -> GPU; empty = identity
  std::uint32_t cluster_gpus = 0;          // GPUs of the cluster (a mapped GPU must be below)
  // Process groups by name (pg_name attribute) -> their trace ranks; a name not here means all ranks.
  std::map<std::string, std::vector<std::uint32_t>> process_groups;
  CollectiveOptions collectives;  // dp_allreduce: the all-reduce algorithm of every trace all-reduce
};

// What the mapping did with the nodes (summed over ranks where it is the program's).
struct TraceCounts {
  std::uint64_t nodes = 0;
  std::uint64_t compute = 0;              // replayed COMP nodes (recorded duration)
  std::uint64_t compute_modeled = 0;      // ... of which timed by the compute model (num_ops)
  std::uint64_t collectives = 0;          // replayed COMM_COLL nodes
  std::uint64_t sends = 0, recvs = 0;     // replayed COMM_SEND / COMM_RECV nodes
  std::uint64_t skipped_cpu = 0;          // is_cpu_op nodes
  std::uint64_t skipped_other = 0;        // metadata, memory and invalid nodes
  std::uint64_t skipped_empty = 0;        // COMP nodes with no duration and no work
  std::uint64_t skipped_collectives = 0;  // collectives of a kind without a cluster algorithm
  std::uint64_t skipped_p2p = 0;          // sends/receives without comm_dst/comm_src (PyTorch's converter)
  std::uint64_t recorded_compute_ps = 0;  // sum of the replayed compute times (recorded or modeled)
  std::uint64_t dangling_ctrl_deps = 0;   // control deps on nodes not in the file (ignored)
  std::uint64_t ctrl_deps_ignored = 0;    // traces ordered by data deps alone (control deps closed a cycle)
  TraceCounts& operator+=(const TraceCounts& o);
};

class TraceProgram final : public cluster::GpuProgram {
 public:
  // Throws std::invalid_argument naming the trace file (and node) for what cannot be replayed: a peer or
  // group member outside the traces, a rank in a group it does not belong to, a GPU out of range or used
  // twice, or ranks whose collectives on a group (or sends and receives between a pair) do not match.
  TraceProgram(const std::vector<workload::chakra::Trace>& traces, const TraceProgramOptions& options,
               std::shared_ptr<const workload::ComputeModel> compute);

  std::optional<cluster::GpuOp> op(std::uint32_t gpu, std::uint64_t index) const override;

  std::uint32_t ranks() const { return static_cast<std::uint32_t>(rank_ops_.size()); }
  std::uint32_t gpu_of(std::uint32_t rank) const { return rank_to_gpu_[rank]; }
  // The trace rank on `gpu`, or nullopt for a GPU no rank is mapped to (idle).
  std::optional<std::uint32_t> rank_of(std::uint32_t gpu) const;
  // Cluster ops of `gpu` (0 for an idle GPU).
  std::uint64_t size(std::uint32_t gpu) const;
  const TraceCounts& counts(std::uint32_t rank) const { return rank_ops_[rank].counts; }
  TraceCounts total_counts() const;

 private:
  struct Mapped {
    workload::Op op;             // group: positions 0..n-1 of `group`
    std::uint32_t group = 0;     // index into groups_ (collectives)
    std::uint32_t position = 0;  // this rank's position in the group
  };
  struct RankOps {
    std::vector<Mapped> ops;
    std::vector<std::uint64_t> prefix;  // prefix[k] = expanded ops of ops[0, k)
    TraceCounts counts;
  };

  std::vector<RankOps> rank_ops_;
  std::vector<std::vector<std::uint32_t>> groups_;  // trace ranks of each group
  std::vector<std::uint32_t> rank_to_gpu_;
  std::map<std::uint32_t, std::uint32_t> gpu_to_rank_;
  std::shared_ptr<const workload::ComputeModel> compute_;
  CollectiveOptions collectives_;
};

}  // namespace warpsim::training
