// Cut-through vs store-and-forward switching (network.switching): on an idle multi-hop path a cut-through
// switch starts forwarding once a packet's head is in, so each switch hop saves the packet's serialization
// time on the link it arrived by. Checked exactly (picoseconds) for a one-packet message and for a long
// message (the pipeline's last packet saves the same), and sequential == optimistic digests are implied
// by the oracle tests of the packet model (cut-through changes only the ready time).
#include <gtest/gtest.h>
#include <mpi.h>

#include <memory>

#include "engine/kernel/engine.hpp"
#include "models/cluster/cluster_events.hpp"
#include "models/cluster/cluster_model.hpp"
#include "partition/block_map.hpp"

namespace warpsim::cluster {
namespace {

// GPU 0 sends one message of `bytes` to GPU `dst`; returns when the receiver's program ended.
class OneMessage final : public GpuProgram {
 public:
  OneMessage(std::uint32_t dst, std::uint64_t bytes) : dst_(dst), bytes_(bytes) {}
  std::optional<GpuOp> op(std::uint32_t gpu, std::uint64_t i) const override {
    if (gpu == 0 && i == 0) return GpuOp::send(dst_, bytes_, 0);
    if (gpu == dst_ && i == 0) return GpuOp::recv(0, bytes_, 0);
    if ((gpu == 0 || gpu == dst_) && i == 1) return GpuOp::wait();
    return std::nullopt;
  }

 private:
  std::uint32_t dst_;
  std::uint64_t bytes_;
};

SimTime arrival(bool cut_through, std::uint32_t dst, std::uint64_t bytes) {
  ClusterParams p;
  p.nodes = 8;
  p.gpus_per_node = 1;
  p.tiers = 2;
  p.radix = 8;  // 4 nodes per leaf: GPU 0 -> GPU 7 crosses leaf, spine, leaf
  p.links[0] = {400, 500 * kPicosPerNano};
  p.links[1] = {200, 500 * kPicosPerNano};  // slower spine links: the saving is per arriving link
  p.cut_through = cut_through;
  ClusterModel model(p, std::make_shared<OneMessage>(dst, bytes));
  EngineConfig config;
  config.sync = SyncMode::kSequential;
  config.end_time = kPicosPerSecond;
  config.progress_seconds = 0;
  BlockLpMap map(model.lp_count(), 1);
  Engine engine(model, map, config, MPI_COMM_SELF);
  engine.run();
  const auto slot = model.gpus().slot_of(model.topology().gpu_lp(dst));
  EXPECT_TRUE(slot && model.gpus().state(*slot).done);
  return model.gpus().state(*slot).finish_ps;
}

TEST(CutThrough, SavesOneInputSerializationPerSwitchHop) {
  const std::uint64_t packet = 4096;
  // Hops: NIC -400G-> leaf -200G-> spine -200G-> leaf -400G-> NIC. The three switches save the
  // serialization on their input links: 400G, 200G and 200G.
  const SimTime saving = serialization_ps(packet, 400) + 2 * serialization_ps(packet, 200);
  for (const std::uint64_t bytes : {packet, std::uint64_t{1} << 20}) {
    SCOPED_TRACE(bytes);
    const SimTime saf = arrival(false, 7, bytes);
    const SimTime ct = arrival(true, 7, bytes);
    RecordProperty("store_and_forward_ps_" + std::to_string(bytes), std::to_string(saf));
    RecordProperty("cut_through_ps_" + std::to_string(bytes), std::to_string(ct));
    EXPECT_EQ(saf - ct, saving);
  }
  // Same leaf: one switch hop, one 400G serialization saved.
  EXPECT_EQ(arrival(false, 1, packet) - arrival(true, 1, packet), serialization_ps(packet, 400));
}

}  // namespace
}  // namespace warpsim::cluster
