// Property test per LP type (ROSS-style checker): random events run forward one after another, then are
// reversed in the opposite order; after each reverse the LP's digest must equal the digest it had before
// that event's forward, and the state must be back to its initial digest at the end.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <random>
#include <vector>

#include "engine/lp_context.hpp"
#include "experiment/spec/cluster_spec.hpp"
#include "models/cluster/cluster_events.hpp"
#include "models/cluster/cluster_model.hpp"
#include "models/cluster/collectives.hpp"
#include "models/cluster/fat_tree.hpp"
#include "tests/models/cluster/lp_harness.hpp"

namespace warpsim::cluster {
namespace {

struct Recorded {
  SimTime time;
  std::uint16_t kind;
  std::array<std::byte, kMaxPayloadBytes> payload;
};

ClusterParams params() {
  return spec::to_cluster_params(
      spec::load_cluster_spec(WARPSIM_EXAMPLES_DIR "/fat_tree_3tier_16gpu.textproto"));
}

template <class T>
std::array<std::byte, kMaxPayloadBytes> bytes_of(const T& value) {
  std::array<std::byte, kMaxPayloadBytes> out{};
  std::memcpy(out.data(), &value, sizeof(T));
  return out;
}

// Runs `events` forward on LP `lp` of `type`, then reverses them, checking digests at every step.
void check_reversible(LpType& type, LpId lp, std::vector<Recorded> events) {
  CountingScheduler scheduler;
  LpContext ctx(scheduler, kMaxPayloadBytes);
  const std::uint32_t slot = type.add_lp(lp);
  std::vector<std::uint64_t> before;
  std::uint64_t order = 0, changed = 0;
  for (Recorded& e : events) {
    before.push_back(type.digest(slot));
    ctx.bind(lp, e.time, EventKey{e.time, ++order, lp}, e.kind, e.payload.data(), 7);
    type.forward(slot, ctx);
    if (type.digest(slot) != before.back()) ++changed;
  }
  EXPECT_GT(scheduler.sends, 0u);
  EXPECT_GT(changed, events.size() / 2) << "most events should change the state";
  for (std::size_t i = events.size(); i-- > 0;) {
    Recorded& e = events[i];
    ctx.bind(lp, e.time, EventKey{e.time, i + 1, lp}, e.kind, e.payload.data(), 7);
    type.reverse(slot, ctx);
    ASSERT_EQ(type.digest(slot), before[i]) << "reverse of event " << i << " (kind " << e.kind << ")";
  }
}

TEST(ReverseProperty, Gpu) {
  const ClusterParams p = params();
  const FatTree topo(p);
  // An all-to-all mixes many posted sends and receives with waits; add a program with compute and storage.
  class Mixed final : public GpuProgram {
   public:
    std::optional<GpuOp> op(std::uint32_t, std::uint64_t i) const override {
      if (i > 400) return std::nullopt;
      switch (i % 6) {
        case 0:
          return GpuOp::compute(1000 + i);
        case 1:
          return GpuOp::send(static_cast<std::uint32_t>(i % 16), 100 + i, static_cast<std::uint32_t>(i % 5));
        case 2:
          return GpuOp::recv(static_cast<std::uint32_t>(i % 7), 64, static_cast<std::uint32_t>(i % 3));
        case 3:
          return GpuOp::storage(static_cast<std::uint32_t>(i % 2), 4096, i % 4 == 1);
        case 4:
          return GpuOp::wait();
        default:
          return GpuOp::recv(static_cast<std::uint32_t>(i % 5), 32, static_cast<std::uint32_t>(i % 2));
      }
    }
  };
  GpuLp type(topo, std::make_shared<Mixed>());
  std::mt19937_64 rng(1);
  std::vector<Recorded> events;
  events.push_back({0, kGpuStart, bytes_of(GpuEvent{})});
  SimTime t = 0;
  for (int i = 0; i < 3000; ++i) {
    t += rng() % 3 * 1000;
    GpuEvent e;
    e.peer = static_cast<std::uint32_t>(rng() % 7);
    e.tag = static_cast<std::uint32_t>(rng() % 3);
    const auto kinds = std::array{kGpuComputeDone, kGpuSendDone, kGpuRecvArrived, kGpuRecvArrived};
    events.push_back({t, kinds[rng() % kinds.size()], bytes_of(e)});
  }
  check_reversible(type, topo.gpu_lp(3), events);
}

TEST(ReverseProperty, Nic) {
  const FatTree topo(params());
  NicLp type(topo);
  std::mt19937_64 rng(2);
  std::vector<Recorded> events;
  SimTime t = 0;
  const std::uint32_t gpu = 5;
  for (int i = 0; i < 3000; ++i) {
    t += rng() % 4 * 500;
    if (rng() % 2) {
      TxEvent tx;
      tx.src_gpu = gpu;
      tx.dst_gpu = static_cast<std::uint32_t>(rng() % 16);
      tx.tag = static_cast<std::uint32_t>(rng() % 4);
      tx.msg_bytes = rng() % 20000;
      tx.offset = tx.msg_bytes ? rng() % tx.msg_bytes : 0;
      events.push_back({t, kNicTx, bytes_of(tx)});
    } else {
      Packet pk;
      pk.src_gpu = static_cast<std::uint32_t>(rng() % 16);
      pk.dst_gpu = gpu;
      pk.bytes = static_cast<std::uint32_t>(rng() % 4097);
      pk.last = static_cast<std::uint32_t>(rng() % 2);
      events.push_back({t, kPacket, bytes_of(pk)});
    }
  }
  check_reversible(type, topo.nic_lp(gpu), events);
}

void check_switch(const FatTree& topo, LpId lp, std::uint64_t seed) {
  SwitchLp type(topo);
  std::mt19937_64 rng(seed);
  std::vector<Recorded> events;
  SimTime t = 0;
  for (int i = 0; i < 3000; ++i) {
    t += rng() % 3 * 20;  // bursts: many packets find a backlog, some overflow a small buffer
    Packet pk;
    pk.src_gpu = static_cast<std::uint32_t>(rng() % 16);
    pk.dst_gpu = static_cast<std::uint32_t>(rng() % 16);
    pk.tag = static_cast<std::uint32_t>(rng() % 8);
    pk.bytes = static_cast<std::uint32_t>(rng() % 4097);
    events.push_back({t, kPacket, bytes_of(pk)});
  }
  check_reversible(type, lp, events);
}

TEST(ReverseProperty, Switches) {
  ClusterParams p = params();
  p.switch_buffer_bytes = 16384;
  const FatTree topo(p);
  check_switch(topo, topo.leaf_lp(2), 3);
  check_switch(topo, topo.tier1_lp(1), 4);
  check_switch(topo, topo.core_lp(3), 5);
  check_switch(topo, topo.nvswitch_lp(6), 6);
}

TEST(ReverseProperty, Storage) {
  const FatTree topo(params());
  StorageLp type(topo);
  std::mt19937_64 rng(7);
  std::vector<Recorded> events;
  SimTime t = 0;
  for (int i = 0; i < 2000; ++i) {
    t += rng() % 3 * 100000;
    StorageEvent r;
    r.client_gpu = static_cast<std::uint32_t>(rng() % 16);
    r.write = static_cast<std::uint32_t>(rng() % 2);
    r.bytes = rng() % (1 << 22);
    events.push_back({t, kStorageRequest, bytes_of(r)});
  }
  check_reversible(type, topo.storage_lp(1), events);
}

}  // namespace
}  // namespace warpsim::cluster
