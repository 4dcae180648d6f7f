// Checkpoint/restart at the engine and LP-type level (docs/checkpoint.md):
// - every cluster LP type (packet and flow fidelity, mid-run) and the tricky test LP: save -> load into a
//   fresh model gives the same digest and saves to the same bytes; a truncated record throws CheckpointError;
// - the tricky model (zero-delay chains, remote zero-delay sends, growing state) stopped at a checkpoint on
//   every rank of MPI_COMM_WORLD and resumed by a new engine ends with the sequential run's per-LP digests,
//   in the optimistic (eager, round-robin: many rollbacks) and conservative modes; and a run that agrees on
//   a cut at every GVT round (--checkpoint-every-seconds ~ 0) and continues does too.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "engine/checkpoint_io.hpp"
#include "engine/kernel/engine.hpp"
#include "experiment/spec/cluster_spec.hpp"
#include "models/cluster/cluster_model.hpp"
#include "models/cluster/collectives.hpp"
#include "partition/block_map.hpp"
#include "tests/engine/kernel/tricky_model.hpp"

namespace warpsim {
namespace {

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

// Round-trips every LP of `a` into `b` (a model of the same shape whose types have seen add_lp for no LP).
void expect_round_trip(Model& a, Model& b) {
  std::vector<std::uint32_t> next_slot(a.type_count(), 0);
  std::uint64_t checked = 0;
  for (LpId id = 0; id < a.lp_count(); ++id) {
    const std::size_t t = a.type_of(id);
    const std::uint32_t slot = next_slot[t]++;
    ASSERT_EQ(b.type(t).add_lp(id), slot);
    std::ostringstream out(std::ios::binary);
    a.type(t).save(slot, out);
    const std::string bytes = out.str();
    std::istringstream in(bytes, std::ios::binary);
    b.type(t).load(slot, in);
    EXPECT_EQ(in.peek(), std::char_traits<char>::eof()) << a.type(t).name() << " LP " << id;
    EXPECT_EQ(b.type(t).digest(slot), a.type(t).digest(slot)) << a.type(t).name() << " LP " << id;
    std::ostringstream again(std::ios::binary);
    b.type(t).save(slot, again);
    EXPECT_EQ(again.str(), bytes) << a.type(t).name() << " LP " << id;
    std::istringstream cut(bytes.substr(0, bytes.size() - 1), std::ios::binary);
    EXPECT_THROW(b.type(t).load(slot, cut), CheckpointError) << a.type(t).name() << " LP " << id;
    std::istringstream restore(bytes, std::ios::binary);
    b.type(t).load(slot, restore);
    ++checked;
  }
  EXPECT_EQ(checked, a.lp_count());
}

cluster::ClusterParams example(const char* file, cluster::Fidelity fidelity) {
  auto p = spec::to_cluster_params(spec::load_cluster_spec(std::string(WARPSIM_EXAMPLES_DIR "/") + file));
  p.fidelity = fidelity;
  return p;
}

// A cluster model run sequentially to `end` (mid-collective), then round-tripped LP by LP.
void cluster_round_trip(cluster::Fidelity fidelity) {
  const auto p = example("fat_tree_2tier_16gpu.textproto", fidelity);
  auto program = std::make_shared<cluster::CollectiveProgram>(
      cluster::Collective::kAllToAll, cluster::Algorithm::kRing, cluster::GpuGroup{0, 16, 1}, 512 << 10);
  EngineConfig config;
  config.sync = SyncMode::kSequential;
  config.progress_seconds = 0;
  config.end_time = kPicosPerSecond;
  SimTime finish = 0;
  {
    cluster::ClusterModel whole(p, program);
    BlockLpMap map(whole.lp_count(), 1);
    Engine(whole, map, config, MPI_COMM_SELF).run();
    for (std::uint32_t slot = 0; slot < whole.gpus().size(); ++slot)
      finish = std::max(finish, whole.gpus().state(slot).finish_ps);
  }
  ASSERT_GT(finish, 0u);
  // Halfway through the all-to-all: flows (or packets) are in flight and GPUs are mid-program.
  config.end_time = finish / 2;
  cluster::ClusterModel model(p, program);
  BlockLpMap map(model.lp_count(), 1);
  Engine engine(model, map, config, MPI_COMM_SELF);
  ASSERT_GT(engine.run().total.committed, 0u);
  if (fidelity == cluster::Fidelity::kFlow) {
    ASSERT_GT(model.flow_network().state(0).flows.size(), 0u) << "no flow in flight at the cut";
  }
  cluster::ClusterModel fresh(p, program);
  expect_round_trip(model, fresh);
}

TEST(CheckpointLpTypes, ClusterPacketFidelityRoundTrips) {
  cluster_round_trip(cluster::Fidelity::kPacket);
}

TEST(CheckpointLpTypes, ClusterFlowFidelityRoundTrips) {
  cluster_round_trip(cluster::Fidelity::kFlow);
}

testing::TrickyParams tricky(bool zero_delay_remote) {
  testing::TrickyParams p;
  p.lp_count = 96;
  p.quantum = 1000;
  p.zero_delay_remote = zero_delay_remote;
  return p;
}

constexpr SimTime kEnd = 400'000;

TEST(CheckpointLpTypes, TrickyRoundTrips) {
  testing::TrickyModel model(tricky(true));
  EngineConfig config;
  config.sync = SyncMode::kSequential;
  config.progress_seconds = 0;
  config.end_time = kEnd / 2;
  BlockLpMap map(model.lp_count(), 1);
  Engine engine(model, map, config, MPI_COMM_SELF);
  engine.run();
  testing::TrickyModel fresh(tricky(true));
  expect_round_trip(model, fresh);
}

std::vector<std::uint64_t> gather_digests(const Engine& engine, std::uint64_t lps, MPI_Comm comm) {
  std::vector<std::uint64_t> digests(lps, 0);
  for (const auto& [lp, d] : engine.local_digests()) digests[lp] = d;
  MPI_Allreduce(MPI_IN_PLACE, digests.data(), static_cast<int>(lps), MPI_UINT64_T, MPI_BXOR, comm);
  return digests;
}

struct Outcome {
  RunResult result;
  std::vector<std::uint64_t> digests;
};

Outcome run_tricky(bool zero_delay_remote, const LpMap& map, EngineConfig config, MPI_Comm comm) {
  testing::TrickyModel model(tricky(zero_delay_remote));
  config.progress_seconds = 0;
  config.end_time = kEnd;
  config.seed = 20261203;
  Engine engine(model, map, config, comm);
  Outcome out;
  out.result = engine.run();
  out.digests = gather_digests(engine, model.lp_count(), comm);
  return out;
}

// A directory every rank agrees on (rank 0 names it), removed at the end of the test.
class SharedDir {
 public:
  SharedDir() {
    std::string name;
    if (world_rank() == 0) {
      char templ[] = "/tmp/warpsim-ckpt-test-XXXXXX";
      name = mkdtemp(templ);
    }
    std::uint64_t n = name.size();
    MPI_Bcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    name.resize(n);
    MPI_Bcast(name.data(), static_cast<int>(n), MPI_CHAR, 0, MPI_COMM_WORLD);
    path_ = name;
  }
  ~SharedDir() {
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) std::filesystem::remove_all(path_);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void stop_and_resume(bool zero_delay_remote, SyncMode sync, bool round_robin, std::uint32_t gvt_interval) {
  const std::uint64_t lps = tricky(zero_delay_remote).lp_count;
  EngineConfig seq;
  seq.sync = SyncMode::kSequential;
  const Outcome reference = run_tricky(zero_delay_remote, BlockLpMap(lps, 1), seq, MPI_COMM_SELF);

  std::unique_ptr<LpMap> map;
  if (round_robin) {
    map = std::make_unique<RoundRobinLpMap>(lps, world_size());
  } else {
    map = std::make_unique<BlockLpMap>(lps, world_size());
  }
  SharedDir dir;
  EngineConfig config;
  config.sync = sync;
  config.gvt_interval = gvt_interval;
  config.checkpoint.dir = dir.path();
  config.checkpoint.at = kEnd / 3 + 17;  // not on the quantum grid
  config.checkpoint.stop_after_first = true;
  const Outcome stopped = run_tricky(zero_delay_remote, *map, config, MPI_COMM_WORLD);
  ASSERT_TRUE(stopped.result.stopped_at_checkpoint);
  EXPECT_EQ(stopped.result.checkpoint_time, config.checkpoint.at);
  EXPECT_LT(stopped.result.total.committed, reference.result.total.committed);

  EngineConfig resume;
  resume.sync = sync;
  resume.gvt_interval = gvt_interval;
  resume.checkpoint.resume = dir.path();
  const Outcome resumed = run_tricky(zero_delay_remote, *map, resume, MPI_COMM_WORLD);
  EXPECT_FALSE(resumed.result.stopped_at_checkpoint);
  EXPECT_EQ(resumed.result.resumed_from, config.checkpoint.at);
  EXPECT_EQ(resumed.result.total.committed, reference.result.total.committed);
  EXPECT_EQ(resumed.digests, reference.digests);
  EXPECT_EQ(resumed.result.state_digest, reference.result.state_digest);
}

TEST(CheckpointEngine, OptimisticBlockStopAndResume) {
  stop_and_resume(true, SyncMode::kOptimistic, false, 4096);
}

TEST(CheckpointEngine, OptimisticEagerRoundRobinStopAndResume) {
  stop_and_resume(true, SyncMode::kOptimistic, true, 16);
}

TEST(CheckpointEngine, ConservativeStopAndResume) {
  stop_and_resume(false, SyncMode::kConservative, true, 4096);
}

// Rank 0 asks for a checkpoint at every GVT round (optimistic) or window (conservative): the ranks agree on
// cuts wherever they happen to be, write them and continue.
void agreed_cuts_change_nothing(bool zero_delay_remote, SyncMode sync) {
  const std::uint64_t lps = tricky(zero_delay_remote).lp_count;
  EngineConfig seq;
  seq.sync = SyncMode::kSequential;
  const Outcome reference = run_tricky(zero_delay_remote, BlockLpMap(lps, 1), seq, MPI_COMM_SELF);
  SharedDir dir;
  EngineConfig config;
  config.sync = sync;
  config.gvt_interval = 64;
  config.checkpoint.dir = dir.path();
  config.checkpoint.every_seconds = 1e-9;
  const Outcome got =
      run_tricky(zero_delay_remote, RoundRobinLpMap(lps, world_size()), config, MPI_COMM_WORLD);
  EXPECT_GT(got.result.checkpoints_written, 1u);
  EXPECT_FALSE(got.result.stopped_at_checkpoint);
  EXPECT_EQ(got.result.total.committed, reference.result.total.committed);
  EXPECT_EQ(got.digests, reference.digests);
  ::testing::Test::RecordProperty("checkpoints_written", std::to_string(got.result.checkpoints_written));
}

TEST(CheckpointEngine, OptimisticAgreedCutsAtEveryGvtRoundChangeNothing) {
  agreed_cuts_change_nothing(true, SyncMode::kOptimistic);
}

TEST(CheckpointEngine, ConservativeAgreedCutsAtEveryWindowChangeNothing) {
  agreed_cuts_change_nothing(false, SyncMode::kConservative);
}

}  // namespace
}  // namespace warpsim
