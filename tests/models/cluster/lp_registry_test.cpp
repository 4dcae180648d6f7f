// The model API's LP-type registry and slotted base (engine/lp_type_registry.hpp, slotted_lp_type.hpp):
// the registry numbers types in registration order and maps LP kinds to them; the cluster model's table
// keeps its historical indices (0 gpu .. 5 flow_network, which checkpoints record); and a model that adds
// a new LP type (tests/models/echo_lp.*) next to PHOLD with one registration line runs sequentially and
// optimistically on every rank of MPI_COMM_WORLD with identical committed-event counts and per-LP digests.
#include <gtest/gtest.h>
#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/kernel/engine.hpp"
#include "engine/lp_type_registry.hpp"
#include "experiment/spec/cluster_spec.hpp"
#include "models/cluster/cluster_model.hpp"
#include "models/cluster/collectives.hpp"
#include "models/phold/phold_model.hpp"
#include "partition/block_map.hpp"
#include "tests/models/cluster/echo_lp.hpp"

namespace warpsim::testing {
namespace {

// PHOLD LPs at even ids, echo LPs at odd ids. Both handle payload-less events of kind 0, so either may
// send to the other.
class MixedModel final : public Model {
 public:
  enum class Kind : std::uint8_t { kPhold, kEcho };

  explicit MixedModel(std::uint64_t lps) : params_(echo_params(lps)), phold_(phold_params(lps), nullptr) {
    types_.add(phold_, {Kind::kPhold});
    echo_ = &types_.emplace<EchoLp>({Kind::kEcho}, params_);  // the new type: one registration line
  }
  std::uint64_t lp_count() const override { return params_.lp_count; }
  std::size_t type_count() const override { return types_.count(); }
  LpType& type(std::size_t index) override { return types_.type(index); }
  std::size_t type_of(LpId lp) const override { return types_.index_of(lp % 2 ? Kind::kEcho : Kind::kPhold); }
  std::size_t payload_bytes() const override { return 0; }
  SimTime lookahead() const override { return params_.hop_delay; }

  const EchoLp& echo() const { return *echo_; }

 private:
  static EchoParams echo_params(std::uint64_t lps) {
    EchoParams p;
    p.lp_count = lps;
    p.hop_delay = phold::kTimeUnit;
    p.end_time = 50 * phold::kTimeUnit;
    return p;
  }
  static phold::PholdParams phold_params(std::uint64_t lps) {
    phold::PholdParams p;
    p.lp_count = lps;
    p.remote = 0.5;
    return p;
  }

  EchoParams params_;
  phold::PholdLp phold_;
  EchoLp* echo_ = nullptr;
  LpTypeRegistry<Kind> types_;
};

struct Outcome {
  std::uint64_t committed = 0;
  std::uint64_t rolled_back = 0;
  std::uint64_t echo_received = 0;     // balls the echo LPs caught, summed over ranks
  std::vector<std::uint64_t> digests;  // by LP id, gathered from all ranks
};

Outcome run(std::uint64_t lps, const LpMap& map, EngineConfig config, MPI_Comm comm) {
  MixedModel model(lps);
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
  out.digests.assign(lps, 0);
  for (int i = 0; i < total; i += 2) out.digests[all[i]] = all[i + 1];
  std::uint64_t received = 0;
  for (std::uint32_t slot = 0; slot < model.echo().size(); ++slot)
    received += model.echo().state(slot).received;
  MPI_Allreduce(&received, &out.echo_received, 1, MPI_UINT64_T, MPI_SUM, comm);
  return out;
}

TEST(LpTypeRegistry, NumbersTypesInRegistrationOrder) {
  enum class Kind { kA, kB, kC };
  EchoParams p;
  LpTypeRegistry<Kind> types;
  EchoLp& first = types.emplace<EchoLp>({Kind::kB}, p);
  EchoLp second(p);
  types.add(second);  // claims no kind, still takes index 1
  types.emplace<EchoLp>({Kind::kA, Kind::kC}, p);
  EXPECT_EQ(types.count(), 3u);
  EXPECT_EQ(&types.type(0), &first);
  EXPECT_EQ(&types.type(1), &second);
  EXPECT_EQ(types.index_of(Kind::kB), 0u);
  EXPECT_EQ(types.index_of(Kind::kA), 2u);
  EXPECT_EQ(types.index_of(Kind::kC), 2u);
  EXPECT_THROW(types.type(3), std::out_of_range);
  EXPECT_THROW(types.add(second, {Kind::kA}), std::logic_error);  // a kind has one type
  LpTypeRegistry<Kind> partial;
  partial.emplace<EchoLp>({Kind::kA}, p);
  EXPECT_THROW(partial.index_of(Kind::kC), std::out_of_range);
}

TEST(SlottedLpType, KeepsSlotsIdsAndStatesInStep) {
  EchoParams p;
  EchoLp echo(p);
  EXPECT_EQ(echo.add_lp(7), 0u);
  EXPECT_EQ(echo.add_lp(3), 1u);
  EXPECT_EQ(echo.size(), 2u);
  EXPECT_EQ(echo.id_of(1), 3u);
  EXPECT_EQ(echo.state(1).id, 3u);  // make_state's default sets a State's id member
  EXPECT_EQ(echo.slot_of(7), 0u);
  EXPECT_FALSE(echo.slot_of(5).has_value());
  EXPECT_EQ(echo.state_bytes(), sizeof(EchoState));
  EXPECT_TRUE(echo.checkpointable());  // trivially copyable State: the base's byte format
}

// The cluster model's type table: the historical indices, under both fidelities.
TEST(LpTypeRegistry, ClusterModelKeepsItsTypeIndices) {
  using cluster::LpKind;
  for (const char* file : {"fat_tree_2tier_16gpu.textproto", "fat_tree_2tier_16gpu_flow.textproto"}) {
    SCOPED_TRACE(file);
    const cluster::ClusterParams p =
        spec::to_cluster_params(spec::load_cluster_spec(std::string(WARPSIM_EXAMPLES_DIR "/") + file));
    cluster::ClusterModel model(
        p, std::make_shared<cluster::CollectiveProgram>(
               cluster::Collective::kAllReduce, cluster::Algorithm::kRing, cluster::GpuGroup{0, 2, 1}, 1024));
    ASSERT_EQ(model.type_count(), 6u);
    const std::vector<std::string> names = {"gpu", "nic", "switch", "storage", "flow_nic", "flow_network"};
    for (std::size_t i = 0; i < names.size(); ++i) EXPECT_EQ(model.type(i).name(), names[i]);
    const bool flow = model.topology().has_flow_network();
    for (LpId lp = 0; lp < model.lp_count(); ++lp) {
      std::size_t expected = 2;
      switch (model.topology().kind_of(lp)) {
        case LpKind::kGpu:
          expected = 0;
          break;
        case LpKind::kNic:
          expected = flow ? 4 : 1;
          break;
        case LpKind::kStorage:
          expected = 3;
          break;
        case LpKind::kFlowNetwork:
          expected = 5;
          break;
        default:
          break;
      }
      EXPECT_EQ(model.type_of(lp), expected) << "LP " << lp;
    }
  }
}

TEST(LpTypeRegistry, NewTypeRunsIdenticallyInEverySyncMode) {
  constexpr std::uint64_t kLps = 64;
  EngineConfig base;
  base.end_time = 100 * phold::kTimeUnit;
  base.seed = 20261205;
  base.sync = SyncMode::kSequential;
  const Outcome reference = run(kLps, BlockLpMap(kLps, 1), base, MPI_COMM_SELF);
  EXPECT_GT(reference.committed, 0u);
  EXPECT_GT(reference.echo_received, kLps / 2) << "echo LPs received no more than their own start events";
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  std::uint64_t rolled_back = 0;
  struct Variant {
    const char* name;
    SyncMode sync;
    bool round_robin;
    std::uint32_t gvt_interval, batch;
  };
  for (const Variant& v : {Variant{"optimistic/block", SyncMode::kOptimistic, false, 4096, 256},
                           Variant{"optimistic/round-robin/eager", SyncMode::kOptimistic, true, 64, 1},
                           Variant{"conservative/block", SyncMode::kConservative, false, 4096, 256}}) {
    SCOPED_TRACE(std::string(v.name) + " on " + std::to_string(ranks) + " ranks");
    EngineConfig config = base;
    config.sync = v.sync;
    config.gvt_interval = v.gvt_interval;
    config.batch = v.batch;
    std::unique_ptr<LpMap> map;
    if (v.round_robin) {
      map = std::make_unique<RoundRobinLpMap>(kLps, ranks);
    } else {
      map = std::make_unique<BlockLpMap>(kLps, ranks);
    }
    const Outcome got = run(kLps, *map, config, MPI_COMM_WORLD);
    EXPECT_EQ(got.committed, reference.committed);
    EXPECT_EQ(got.echo_received, reference.echo_received);
    std::uint64_t differing = 0;
    for (std::uint64_t lp = 0; lp < kLps; ++lp) differing += got.digests[lp] != reference.digests[lp];
    EXPECT_EQ(differing, 0u) << "LPs differ from the sequential run";
    rolled_back += got.rolled_back;
  }
  RecordProperty("rolled_back", std::to_string(rolled_back));
  if (ranks > 1) {
    EXPECT_GT(rolled_back, 0u) << "the eager round-robin variant is meant to roll back";
  }
}

}  // namespace
}  // namespace warpsim::testing
