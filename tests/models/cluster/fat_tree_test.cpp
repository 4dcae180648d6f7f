// Arithmetic fat-tree: every GPU pair has an up/down route that ends at the destination NIC within the
// tier bound, ports and peers agree, and the LP id layout partitions [0, lp_count).
#include <gtest/gtest.h>

#include <set>

#include "experiment/spec/cluster_spec.hpp"
#include "models/cluster/cluster_events.hpp"
#include "models/cluster/fat_tree.hpp"

namespace warpsim::cluster {
namespace {

ClusterParams example(const char* file) {
  return spec::to_cluster_params(spec::load_cluster_spec(std::string(WARPSIM_EXAMPLES_DIR "/") + file));
}

// Follows the route from src's NIC; returns the switches crossed (or -1 if it loops or leaves the tree).
int walk(const FatTree& t, std::uint32_t src, std::uint32_t dst, std::uint32_t tag,
         std::set<LpId>* tier_seen) {
  const std::uint64_t h = flow_hash(src, dst, tag);
  LpId at = t.nic_lp(src);
  int switches = 0;
  for (int hop = 0; hop < 16; ++hop) {
    const std::uint32_t port = t.route(at, src, dst, at == t.nic_lp(src) ? 0 : h);
    if (port >= t.port_count(at)) return -1;
    const PortPeer peer = t.peer(at, port);
    if (peer.lp >= t.lp_count() || !(peer.link.bandwidth_gbps > 0)) return -1;
    if (peer.lp == t.nic_lp(dst)) return switches;
    const LpKind k = t.kind_of(peer.lp);
    if (k == LpKind::kGpu || k == LpKind::kNic || k == LpKind::kStorage) return -1;
    if (tier_seen && (k == LpKind::kTier1 || k == LpKind::kCore)) tier_seen->insert(peer.lp);
    ++switches;
    at = peer.lp;
  }
  return -1;
}

void check_all_pairs(const ClusterParams& p, int max_switches) {
  const FatTree t(p);
  std::set<LpId> upper;
  for (std::uint32_t s = 0; s < t.gpus(); ++s) {
    for (std::uint32_t d = 0; d < t.gpus(); ++d) {
      if (s == d) continue;
      for (std::uint32_t tag = 0; tag < 4; ++tag) {
        const int n = walk(t, s, d, tag, &upper);
        ASSERT_GE(n, 1) << "no route " << s << " -> " << d;
        ASSERT_LE(n, max_switches) << s << " -> " << d;
        if (t.node_of(s) == t.node_of(d) && p.gpus_per_node > 1) {
          EXPECT_EQ(n, 1) << "same node goes over the NVSwitch";
        }
        if (t.leaf_of_gpu(s) == t.leaf_of_gpu(d) && t.node_of(s) != t.node_of(d)) {
          EXPECT_EQ(n, 1);
        }
      }
    }
  }
  // ECMP spreads flows over more than one upper-tier switch.
  EXPECT_GT(upper.size(), 1u);
}

TEST(FatTree, TwoTierRoutesReachEveryDestination) {
  check_all_pairs(example("fat_tree_2tier_16gpu.textproto"), 3);
}

TEST(FatTree, ThreeTierRoutesReachEveryDestination) {
  check_all_pairs(example("fat_tree_3tier_16gpu.textproto"), 5);
}

TEST(FatTree, LayoutIsDense) {
  const FatTree t(example("fat_tree_3tier_16gpu.textproto"));
  // 16 GPUs, 16 NICs, 8 NVSwitches, 8 leaves, 8 aggregation, 4 cores, 2 storage targets.
  EXPECT_EQ(t.lp_count(), 16u + 16 + 8 + 8 + 8 + 4 + 2);
  // Node-major: node n holds ids [5n, 5n+5): GPU, GPU, NIC, NIC, NVSwitch.
  EXPECT_EQ(t.kind_of(0), LpKind::kGpu);
  EXPECT_EQ(t.kind_of(1), LpKind::kGpu);
  EXPECT_EQ(t.kind_of(2), LpKind::kNic);
  EXPECT_EQ(t.kind_of(3), LpKind::kNic);
  EXPECT_EQ(t.kind_of(4), LpKind::kNvSwitch);
  EXPECT_EQ(t.kind_of(5), LpKind::kGpu);
  EXPECT_EQ(t.kind_of(39), LpKind::kNvSwitch);
  EXPECT_EQ(t.kind_of(40), LpKind::kLeaf);
  EXPECT_EQ(t.kind_of(48), LpKind::kTier1);
  EXPECT_EQ(t.kind_of(56), LpKind::kCore);
  EXPECT_EQ(t.kind_of(60), LpKind::kStorage);
  EXPECT_EQ(t.gpu_lp(3), 6u);
  EXPECT_EQ(t.nic_lp(3), 8u);
  EXPECT_EQ(t.nvswitch_lp(1), 9u);
  for (std::uint32_t g = 0; g < t.gpus(); ++g) {
    EXPECT_EQ(t.gpu_of(t.gpu_lp(g)), g);
    EXPECT_EQ(t.gpu_of(t.nic_lp(g)), g);
  }
  // Rail-optimized: GPU 3 (node 1, rail 1) is on the rail-1 leaf of node group 0.
  EXPECT_EQ(t.leaf_of_gpu(3), 1u);
  EXPECT_EQ(t.leaf_of_gpu(5), 3u);
  // Down-port peers point back: leaf port p reaches NIC of node group*down + p on the leaf's rail.
  EXPECT_EQ(t.peer(t.leaf_lp(1), 1).lp, t.nic_lp(3));
}

TEST(FatTree, OversubscriptionSplitsPorts) {
  ClusterParams p;
  p.nodes = 8;
  p.gpus_per_node = 1;
  p.radix = 6;
  p.oversubscription = 2;
  const FatTree t(p);
  EXPECT_EQ(t.down_ports(), 4u);
  EXPECT_EQ(t.up_ports(), 2u);
  EXPECT_EQ(t.leaf_count(), 2u);
}

// A node count that does not fill the last leaf (or pod) leaves empty ports: port_connected() says which,
// and every connected port's peer names the port back (the results file's peer_lp and the fabric's
// utilization denominators rely on it).
TEST(FatTree, EmptyPortsOfAPartialLastLeafAndPodAreNotConnected) {
  for (const std::uint32_t tiers : {2u, 3u}) {
    ClusterParams p;
    p.nodes = 7;  // radix 8: 4 nodes per leaf group, the 2nd group 3 of 4
    p.gpus_per_node = 2;
    p.radix = 8;
    p.tiers = tiers;
    const FatTree t(p);
    std::uint32_t empty = 0, empty_leaf = 0;
    for (LpId lp = t.first_switch_lp(); lp < t.lp_count(); ++lp) {
      const LpKind k = t.kind_of(lp);
      if (k != LpKind::kLeaf && k != LpKind::kTier1 && k != LpKind::kCore) continue;
      for (std::uint32_t port = 0; port < t.port_count(lp); ++port) {
        if (!t.port_connected(lp, port)) {
          ++empty;
          if (k == LpKind::kLeaf) ++empty_leaf;
          continue;
        }
        const PortPeer peer = t.peer(lp, port);
        ASSERT_LT(peer.lp, t.lp_count());
        bool back = false;
        for (std::uint32_t q = 0; q < t.port_count(peer.lp) && !back; ++q) back = t.peer(peer.lp, q).lp == lp;
        EXPECT_TRUE(back) << "tiers " << tiers << ": switch " << lp << " port " << port << " -> " << peer.lp;
      }
    }
    // Each rail's leaf of the partial group has one empty down port (2 rails); the tiers above have as many
    // ports as there are leaves (pods) below them.
    EXPECT_EQ(empty_leaf, 2u) << "tiers " << tiers;
    EXPECT_EQ(empty, empty_leaf) << "tiers " << tiers;
    EXPECT_FALSE(t.port_connected(t.leaf_lp(2), 3));  // group 1, rail 0, port 3: node 7 does not exist
    EXPECT_TRUE(t.port_connected(t.leaf_lp(2), 2));   // node 6
  }
  // A partial pod: 3 tiers of radix 8 hold 4 leaves per pod; one GPU per node gives 2 leaves, so each
  // aggregation switch has 2 down ports towards leaves that do not exist.
  ClusterParams p;
  p.nodes = 7;
  p.gpus_per_node = 1;
  p.radix = 8;
  p.tiers = 3;
  const FatTree t(p);
  ASSERT_EQ(t.leaf_count(), 2u);
  EXPECT_TRUE(t.port_connected(t.tier1_lp(0), 1));
  EXPECT_FALSE(t.port_connected(t.tier1_lp(0), 2));
  EXPECT_FALSE(t.port_connected(t.tier1_lp(0), 3));
  EXPECT_TRUE(t.port_connected(t.tier1_lp(0), 4));  // up, to a core
}

}  // namespace
}  // namespace warpsim::cluster
