// The correctness oracle for the cluster model: collective scenarios run sequentially (on MPI_COMM_SELF)
// and conservatively/optimistically on every rank of MPI_COMM_WORLD (block and round-robin partitions,
// eager and throttled engine settings) must give identical committed-event counts and per-LP digests.
#include <gtest/gtest.h>
#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/kernel/engine.hpp"
#include "experiment/spec/cluster_spec.hpp"
#include "models/cluster/cluster_model.hpp"
#include "models/cluster/collectives.hpp"
#include "models/cluster/fat_tree.hpp"
#include "partition/block_map.hpp"

namespace warpsim::cluster {
namespace {

struct Outcome {
  std::uint64_t committed = 0;
  std::uint64_t rolled_back = 0;
  std::vector<std::uint64_t> digests;  // by LP id, gathered from all ranks
};

Outcome run(const ClusterParams& p, std::shared_ptr<const GpuProgram> program, const LpMap& map,
            EngineConfig config, MPI_Comm comm) {
  ClusterModel model(p, std::move(program));
  config.progress_seconds = 0;
  Engine engine(model, map, config, comm);
  const RunResult result = engine.run();
  std::vector<std::uint64_t> mine;
  for (const auto& [lp, d] : engine.local_digests()) {
    mine.push_back(lp);
    mine.push_back(d);
  }
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  int count = static_cast<int>(mine.size());
  std::vector<int> counts(ranks), displs(ranks);
  MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  int total = 0;
  for (int r = 0; r < ranks; ++r) {
    displs[r] = total;
    total += counts[r];
  }
  std::vector<std::uint64_t> all(total);
  MPI_Allgatherv(mine.data(), count, MPI_UINT64_T, all.data(), counts.data(), displs.data(), MPI_UINT64_T,
                 comm);
  Outcome out;
  out.committed = result.total.committed;
  out.rolled_back = result.total.rolled_back;
  out.digests.assign(model.lp_count(), 0);
  for (int i = 0; i < total; i += 2) out.digests[all[i]] = all[i + 1];
  return out;
}

struct Variant {
  std::string name;
  SyncMode sync;
  bool round_robin;
  std::uint32_t gvt_interval, batch, poll;
  std::uint64_t max_uncommitted;
};

// Returns the events rolled back over the optimistic variants (evidence that reverse handlers ran).
std::uint64_t check_against_sequential(const ClusterParams& p, std::shared_ptr<const GpuProgram> program) {
  const std::uint64_t lps = FatTree(p).lp_count();
  EngineConfig base;
  base.end_time = 1000 * kPicosPerSecond;
  base.seed = 20261202;
  base.sync = SyncMode::kSequential;
  const Outcome reference = run(p, program, BlockLpMap(lps, 1), base, MPI_COMM_SELF);
  EXPECT_GT(reference.committed, 0u);
  std::uint64_t rolled_back = 0;
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const std::vector<Variant> variants = {
      {"optimistic/block", SyncMode::kOptimistic, false, 4096, 256, 16, 0},
      {"optimistic/round-robin/eager", SyncMode::kOptimistic, true, 64, 1, 1, 0},
      {"optimistic/block/throttled", SyncMode::kOptimistic, false, 16, 8, 4, 256},
      {"conservative/block", SyncMode::kConservative, false, 4096, 256, 16, 0},
      {"conservative/round-robin", SyncMode::kConservative, true, 4096, 1, 16, 0},
  };
  for (const Variant& v : variants) {
    SCOPED_TRACE(v.name + " on " + std::to_string(ranks) + " ranks");
    EngineConfig config = base;
    config.sync = v.sync;
    config.gvt_interval = v.gvt_interval;
    config.batch = v.batch;
    config.poll_interval = v.poll;
    config.max_uncommitted = v.max_uncommitted;
    std::unique_ptr<LpMap> map;
    if (v.round_robin) {
      map = std::make_unique<RoundRobinLpMap>(lps, ranks);
    } else {
      map = std::make_unique<BlockLpMap>(lps, ranks);
    }
    const Outcome got = run(p, program, *map, config, MPI_COMM_WORLD);
    EXPECT_EQ(got.committed, reference.committed);
    std::uint64_t differing = 0, first = 0;
    for (std::uint64_t lp = 0; lp < lps; ++lp) {
      if (got.digests[lp] != reference.digests[lp] && differing++ == 0) first = lp;
    }
    EXPECT_EQ(differing, 0u) << "LPs differ from the sequential run, first LP " << first;
    rolled_back += got.rolled_back;
  }
  return rolled_back;
}

ClusterParams example(const char* file) {
  return spec::to_cluster_params(spec::load_cluster_spec(std::string(WARPSIM_EXAMPLES_DIR "/") + file));
}

TEST(ClusterOracle, RingAllReduceTwoTier) {
  check_against_sequential(example("fat_tree_2tier_16gpu.textproto"),
                           std::make_shared<CollectiveProgram>(Collective::kAllReduce, Algorithm::kRing,
                                                               GpuGroup{0, 16, 1}, 256 << 10));
}

TEST(ClusterOracle, AllToAllThreeTier) {
  // All-to-all posts every message at once: NIC chains interleave and switch queues build up.
  const std::uint64_t rolled_back =
      check_against_sequential(example("fat_tree_3tier_16gpu.textproto"),
                               std::make_shared<CollectiveProgram>(Collective::kAllToAll, Algorithm::kRing,
                                                                   GpuGroup{0, 16, 1}, 512 << 10));
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  RecordProperty("rolled_back", std::to_string(rolled_back));
  if (ranks > 1) {
    EXPECT_GT(rolled_back, 0u) << "the eager round-robin variant is meant to roll back";
  }
}

TEST(ClusterOracle, BroadcastAndAllGatherOnStridedGroups) {
  const ClusterParams p = example("fat_tree_3tier_16gpu.textproto");
  check_against_sequential(p, std::make_shared<CollectiveProgram>(Collective::kBroadcast, Algorithm::kRing,
                                                                  GpuGroup{1, 8, 2}, 256 << 10, 32 << 10));
  check_against_sequential(p, std::make_shared<CollectiveProgram>(Collective::kAllGather, Algorithm::kRing,
                                                                  GpuGroup{0, 8, 2}, 128 << 10));
}

ClusterParams flow(ClusterParams p) {
  p.fidelity = Fidelity::kFlow;
  return p;
}

TEST(ClusterOracle, FlowFidelityRingAllReduceTwoTier) {
  check_against_sequential(flow(example("fat_tree_2tier_16gpu.textproto")),
                           std::make_shared<CollectiveProgram>(Collective::kAllReduce, Algorithm::kRing,
                                                               GpuGroup{0, 16, 1}, 256 << 10));
}

TEST(ClusterOracle, FlowFidelityAllToAllThreeTier) {
  // Every flow of the all-to-all shares links with others: rates change at every start and end, and
  // stale completions are ignored; the single flow-network LP rolls back with undo records.
  const std::uint64_t rolled_back =
      check_against_sequential(flow(example("fat_tree_3tier_16gpu.textproto")),
                               std::make_shared<CollectiveProgram>(Collective::kAllToAll, Algorithm::kRing,
                                                                   GpuGroup{0, 16, 1}, 512 << 10));
  RecordProperty("rolled_back", std::to_string(rolled_back));
}

TEST(ClusterOracle, TreeAndHierarchicalAllReduce) {
  const ClusterParams p = example("fat_tree_2tier_16gpu.textproto");
  check_against_sequential(p, std::make_shared<CollectiveProgram>(Collective::kAllReduce, Algorithm::kTree,
                                                                  GpuGroup{0, 16, 1}, 512 << 10, 64 << 10));
  check_against_sequential(flow(p),
                           std::make_shared<CollectiveProgram>(Collective::kAllReduce, Algorithm::kTree,
                                                               GpuGroup{0, 13, 1}, 512 << 10, 64 << 10));
  check_against_sequential(
      p, std::make_shared<CollectiveProgram>(Collective::kAllReduce, Algorithm::kHierarchical,
                                             GpuGroup{0, 16, 1}, 256 << 10, 1 << 20, 4));
}

TEST(ClusterOracle, RailAlignedRingChannels) {
  // Four rail-aligned channels (ring_order.hpp): every step posts four sends and four receives, several to
  // the same NVLink neighbour under different tags.
  const ClusterParams p = example("fat_tree_2tier_16gpu.textproto");
  check_against_sequential(p, std::make_shared<CollectiveProgram>(Collective::kAllReduce, Algorithm::kRing,
                                                                  GpuGroup{0, 16, 1}, 256 << 10, 1 << 20, 4));
  check_against_sequential(flow(p),
                           std::make_shared<CollectiveProgram>(Collective::kReduceScatter, Algorithm::kRing,
                                                               GpuGroup{0, 16, 1}, 256 << 10, 1 << 20, 4));
  check_against_sequential(
      p, std::make_shared<CollectiveProgram>(Collective::kBroadcast, Algorithm::kRing, GpuGroup{0, 16, 1},
                                             256 << 10, 32 << 10, 4));
  // With NCCL's protocol cost (a start Compute op, LL's doubled wire bytes).
  auto costed = std::make_shared<CollectiveProgram>(Collective::kAllReduce, Algorithm::kRing,
                                                    GpuGroup{0, 16, 1}, 64 << 10, 1 << 20, 4);
  costed->set_protocol_cost(20 * kPicosPerMicro, 2.0);
  check_against_sequential(p, costed);
}

TEST(ClusterOracle, HierarchicalReduceScatterAllGatherAndBroadcasts) {
  const ClusterParams p = example("fat_tree_2tier_16gpu.textproto");
  check_against_sequential(
      p, std::make_shared<CollectiveProgram>(Collective::kReduceScatter, Algorithm::kHierarchical,
                                             GpuGroup{0, 16, 1}, 256 << 10, 1 << 20, 4));
  check_against_sequential(
      flow(p), std::make_shared<CollectiveProgram>(Collective::kAllGather, Algorithm::kHierarchical,
                                                   GpuGroup{0, 16, 1}, 256 << 10, 1 << 20, 4));
  check_against_sequential(p, std::make_shared<CollectiveProgram>(Collective::kBroadcast, Algorithm::kTree,
                                                                  GpuGroup{0, 13, 1}, 256 << 10, 32 << 10));
  check_against_sequential(
      p, std::make_shared<CollectiveProgram>(Collective::kBroadcast, Algorithm::kHierarchical,
                                             GpuGroup{0, 16, 1}, 256 << 10, 32 << 10, 4));
}

// Two streams: each GPU computes on stream 0 while stream 1 runs a ring all-reduce that waits for the first
// compute op (the gradients it reduces), and stream 0 waits for the all-reduce before its last compute op.
class OverlappedAllReduce final : public GpuProgram {
 public:
  OverlappedAllReduce(std::shared_ptr<const CollectiveProgram> coll, std::uint32_t gpus)
      : coll_(std::move(coll)) {
    for (std::uint32_t g = 0; g < gpus; ++g) {
      std::uint64_t n = 0;
      while (coll_->op(g, n)) ++n;
      comm_ops_.push_back(n + 1);
    }
  }
  bool has_comm_stream() const override { return true; }
  std::optional<GpuOp> op(std::uint32_t gpu, std::uint64_t index) const override {
    if (gpu >= comm_ops_.size()) return std::nullopt;
    const SimTime us = kPicosPerMicro;
    switch (index) {
      case 0:
        return GpuOp::compute((3 + gpu % 5) * us);
      case 1:
        return GpuOp::compute(20 * us);
      case 2:
        return GpuOp::wait_stream(comm_ops_[gpu] - 1, 2);
      case 3:
        return GpuOp::compute(7 * us);
      default:
        return std::nullopt;
    }
  }
  std::optional<GpuOp> comm_op(std::uint32_t gpu, std::uint64_t index) const override {
    if (gpu >= comm_ops_.size()) return std::nullopt;
    if (index == 0) return GpuOp::wait_stream(0);
    return coll_->op(gpu, index - 1);
  }

 private:
  std::shared_ptr<const CollectiveProgram> coll_;
  std::vector<std::uint64_t> comm_ops_;
};

TEST(ClusterOracle, CommStreamOverlapsAnAllReduceWithCompute) {
  const ClusterParams p = example("fat_tree_2tier_16gpu.textproto");
  const auto ring = std::make_shared<CollectiveProgram>(Collective::kAllReduce, Algorithm::kRing,
                                                        GpuGroup{0, 16, 1}, 256 << 10);
  check_against_sequential(p, std::make_shared<OverlappedAllReduce>(ring, 16));
  check_against_sequential(flow(p), std::make_shared<OverlappedAllReduce>(ring, 16));
}

}  // namespace
}  // namespace warpsim::cluster
