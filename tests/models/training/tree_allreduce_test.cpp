// The data-parallel all-reduce as a double binary tree (training.dp_allreduce_algorithm "tree"): the padded
// schedule covers every member, the adapter's programs match every send with one receive, a tree
// all-reduce moves the same bytes as the ring (2(n-1) B over the group) in far fewer ops at large n, and
// the spec field is validated with errors naming it.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "experiment/spec/cluster_spec.hpp"
#include "experiment/spec/experiment_spec.hpp"
#include "experiment/spec/job_spec.hpp"
#include "models/training/training_program.hpp"
#include "models/training/tree_schedule.hpp"
#include "models/workload/gpu_program.hpp"

namespace warpsim::training {
namespace {

spec::JobSpec tree_job() {
  return spec::load_experiment_spec(std::string(WARPSIM_TRAINING_TEST_DIR) + "/small_tree.textproto").job();
}

TEST(TreeSchedule, PaddedCountCoversEveryMemberAndBytesMatchTheRing) {
  for (const std::uint32_t n : {2u, 3u, 5u, 8u, 13u, 64u, 800u}) {
    const std::uint64_t bytes = 1'000'000'007ull, chunk = 64ull << 20;
    const TreeSchedule& t = tree_schedule(n, bytes, chunk);
    std::uint64_t longest = 0, sent = 0, received = 0;
    for (std::uint32_t r = 0; r < n; ++r) {
      longest = std::max(longest, t.ops(r));
      for (std::uint64_t i = 0; i < t.padded_ops(); ++i) {
        const cluster::RankOp o = t.op(r, i);
        if (i >= t.ops(r)) {
          ASSERT_EQ(o.kind, cluster::OpKind::kWait) << "padding of rank " << r;
        }
        if (o.kind == cluster::OpKind::kSend) sent += o.bytes;
        if (o.kind == cluster::OpKind::kRecv) received += o.bytes;
      }
    }
    EXPECT_EQ(t.padded_ops(), longest) << "n=" << n;
    // Each tree reduces its half up (n-1 sends) and broadcasts it down (n-1 sends): 2(n-1) B in all,
    // the ring's total (2(n-1)/n B per member).
    EXPECT_EQ(sent, 2ull * (n - 1) * bytes) << "n=" << n;
    EXPECT_EQ(received, sent) << "n=" << n;
    // Ring: 6(n-1) ops; the tree: O(chunks + depth) per member.
    if (n >= 64) {
      EXPECT_LT(t.padded_ops(), 6ull * (n - 1)) << "n=" << n;
    }
    if (n >= 800) {
      EXPECT_LT(t.padded_ops() * 20, 6ull * (n - 1)) << "n=" << n;
    }
  }
  EXPECT_THROW((void)tree_schedule(4, 100, 10).op(0, tree_schedule(4, 100, 10).padded_ops()),
               std::logic_error);
}

TEST(TreeAdapter, ProgramsAreCompleteMatchedAndUseTheTreeForDataParallelAllReduces) {
  spec::JobSpec js = spec::normalized(tree_job());
  spec::validate_job_spec(js);
  const auto job = std::make_shared<const workload::Job>(spec::to_job_params(js));
  ASSERT_EQ(collective_options(*job).dp_allreduce, cluster::Algorithm::kTree);
  ASSERT_EQ(collective_options(*job).tree_chunk_bytes, 1'000'000u);
  constexpr std::uint32_t kSteps = 2, kTargets = 2;
  const TrainingProgram prog(job, kSteps, kTargets);
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint64_t>, long> balance;
  std::uint64_t tree_ops_checked = 0;
  for (std::uint32_t g = 0; g < job->world_size(); ++g) {
    const workload::GpuProgram wl(job, g, kSteps);
    std::uint64_t i = 0;
    while (auto op = prog.op(g, i)) {
      const auto src = prog.source(g, i);
      ASSERT_TRUE(src.has_value());
      if (src->sub == 0) {
        const workload::Op w = wl.op(src->workload_index);
        if (uses_tree(w, collective_options(*job))) {
          const TreeSchedule& t = tree_schedule(w.group.size(), w.comm_bytes, 1'000'000);
          // NCCL's latency first ([Delay, Wait], training.nccl_protocol's default), then the tree.
          ASSERT_EQ(expanded_count(w, kTargets, 0, collective_options(*job)), 2 + t.padded_ops());
          ASSERT_NE(t.padded_ops(), 6ull * (w.group.size() - 1));  // not the ring's count
          EXPECT_EQ(prog.op(g, i)->kind, cluster::OpKind::kDelay);
          double sent = 0;
          for (std::uint64_t k = 2; k < 2 + t.padded_ops(); ++k) {
            const auto c = prog.op(g, i + k);
            if (c->kind == cluster::OpKind::kSend || c->kind == cluster::OpKind::kRecv) {
              ASSERT_TRUE(w.group.index_of(c->peer) < w.group.size()) << "peer outside the DP group";
            }
            if (c->kind == cluster::OpKind::kSend) sent += static_cast<double>(c->bytes);
          }
          EXPECT_GT(sent, 0);
          ++tree_ops_checked;
        }
      }
      if (op->kind == cluster::OpKind::kSend) ++balance[{g, op->peer, op->tag, op->bytes}];
      if (op->kind == cluster::OpKind::kRecv) --balance[{op->peer, g, op->tag, op->bytes}];
      ++i;
    }
    EXPECT_EQ(i, prog.size(g));
  }
  EXPECT_GT(tree_ops_checked, 0u) << "no data-parallel all-reduce ran as a tree";
  for (const auto& [key, b] : balance) {
    ASSERT_EQ(b, 0) << "unmatched message " << std::get<0>(key) << " -> " << std::get<1>(key);
  }
}

void expect_error(const std::function<void(spec::JobSpec&)>& edit, const std::string& field) {
  spec::JobSpec js = spec::normalized(tree_job());
  edit(js);
  try {
    spec::validate_job_spec(js);
    FAIL() << "accepted a spec with a bad " << field;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
  }
}

TEST(TreeAdapter, SpecFieldsAreValidated) {
  expect_error([](spec::JobSpec& j) { j.mutable_training()->set_dp_allreduce_algorithm("butterfly"); },
               "training.dp_allreduce_algorithm");
  expect_error([](spec::JobSpec& j) { j.mutable_parallelism()->set_zero_stage(1); },
               "training.dp_allreduce_algorithm");
  expect_error([](spec::JobSpec& j) { j.mutable_training()->set_dp_allreduce_algorithm("ring"); },
               "training.dp_tree_chunk_bytes");
  spec::JobSpec ring = spec::normalized(tree_job());
  ring.mutable_training()->clear_dp_allreduce_algorithm();
  ring.mutable_training()->clear_dp_tree_chunk_bytes();
  EXPECT_NO_THROW(spec::validate_job_spec(ring));
  // Unset, the algorithm is NCCL's choice per all-reduce ("auto").
  EXPECT_TRUE(collective_options(workload::Job(spec::to_job_params(ring))).dp_allreduce_auto);
  ring.mutable_training()->set_dp_allreduce_algorithm("ring");
  const CollectiveOptions forced = collective_options(workload::Job(spec::to_job_params(ring)));
  EXPECT_FALSE(forced.dp_allreduce_auto);
  EXPECT_EQ(forced.dp_allreduce, cluster::Algorithm::kRing);
}

// "auto": a data-parallel all-reduce runs as the tree exactly where NCCL's tuning model prefers it and the
// group has one member per node; several members per node keep the ring whatever the model says.
TEST(TreeAdapter, AutoRunsTheTreeWhereNcclWouldAndWarpsimBuildsNcclsTree) {
  for (const char* file : {"small_auto_tree.textproto", "small.textproto", "small_chain_tree.textproto"}) {
    const spec::ExperimentSpec exp =
        spec::load_experiment_spec(std::string(WARPSIM_TRAINING_TEST_DIR) + "/" + file);
    const auto job = std::make_shared<const workload::Job>(spec::to_job_params(exp.job()));
    const cluster::ClusterParams params = spec::to_cluster_params(exp.cluster());
    CollectiveOptions options = collective_options(*job);
    ASSERT_TRUE(options.dp_allreduce_auto) << file;
    options.gpus_per_node = params.gpus_per_node;
    options.fabric = cluster::nccl_fabric(params);
    std::uint64_t trees = 0, chained = 0, rings = 0;
    const workload::GpuProgram wl(job, 0, 1);
    for (std::uint64_t i = 0; i < wl.size(); ++i) {
      const workload::Op op = wl.op(i);
      if (op.kind != workload::OpKind::kCollective || op.collective != workload::CollectiveKind::kAllReduce ||
          op.group_kind != workload::GroupKind::kDataContext)
        continue;
      const std::uint32_t n = op.group.size(), nodes = group_nodes(op.group, options.gpus_per_node);
      const std::uint32_t per_node = tree_members_per_node(op, options);
      const bool nccl_tree =
          cluster::nccl_allreduce_algorithm(op.comm_bytes, cluster::nccl_shape(options.fabric, n, nodes)) ==
          cluster::Algorithm::kTree;
      // One member per node (the flat tree) or the same rail members on every node (the chained tree).
      EXPECT_EQ(uses_tree(op, options), nccl_tree && nodes * per_node == n) << file << " op " << i;
      (uses_tree(op, options) ? trees : rings) += 1;
      if (uses_tree(op, options) && per_node > 1) ++chained;
      // NCCL's 512 KiB per channel: a chained tree runs a tree pair per channel; the flat tree carries one
      // channel per member on a node.
      EXPECT_EQ(tree_chunk_bytes(op, options), (512ull << 10) * (per_node > 1 ? 1 : n / nodes)) << file;
    }
    if (std::string(file) == "small_auto_tree.textproto") {
      EXPECT_GT(trees, 0u) << "no 1.5 MB bucket ran as the tree";
      EXPECT_EQ(chained, 0u);
    } else if (std::string(file) == "small_chain_tree.textproto") {
      EXPECT_GT(chained, 0u) << "no 4 MiB bucket ran as the chained tree";
    } else {
      EXPECT_EQ(trees, 0u) << "NCCL's model keeps small.textproto's 8 MB buckets on the ring";
      EXPECT_GT(rings, 0u);
    }
  }
}

}  // namespace
}  // namespace warpsim::training
