// The placement policies of a shared cluster's jobs (experiment/job_placement.hpp) on a small fat tree whose
// leaf groups are known: radix 8, oversubscription 3 -> 6 nodes per leaf group, 12 nodes of 4 GPUs.
#include "experiment/job_placement.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace warpsim::experiment {
namespace {

cluster::ClusterParams cluster12() {
  cluster::ClusterParams p;
  p.nodes = 12;
  p.gpus_per_node = 4;
  p.radix = 8;
  p.oversubscription = 3;
  return p;
}

std::vector<std::uint32_t> nodes_of(const std::vector<std::uint32_t>& gpus) {
  std::vector<std::uint32_t> out;
  for (std::size_t r = 0; r < gpus.size(); r += 4) out.push_back(gpus[r] / 4);
  return out;
}

TEST(JobPlacement, LeafGroupsOfTheFatTree) {
  EXPECT_EQ(nodes_per_leaf_group(cluster12()), 6u);
}

TEST(JobPlacement, PackedSpreadAndTopology) {
  const auto p = cluster12();
  std::vector<bool> used(48, false);
  // 8 GPUs packed: nodes 0, 1; rank r on local GPU r % 4.
  const auto a = place_job(p, {"packed", 8, {}}, 0, used);
  EXPECT_EQ(nodes_of(a), (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(a[5], 5u);
  EXPECT_TRUE(node_aligned(a, 4));
  // Spread: the first free node of each leaf group, then the next: 2, 6, 3, 7.
  const auto b = place_job(p, {"spread", 16, {}}, 1, used);
  EXPECT_EQ(nodes_of(b), (std::vector<std::uint32_t>{2, 6, 3, 7}));
  EXPECT_TRUE(node_aligned(b, 4));
  // Topology: 4 nodes do not fit the first leaf group (4, 5 free) but the second (8-11).
  const auto c = place_job(p, {"topology", 16, {}}, 2, used);
  EXPECT_EQ(nodes_of(c), (std::vector<std::uint32_t>{8, 9, 10, 11}));
  // Packed needs 3 consecutive free nodes: only 4, 5 are left.
  EXPECT_THROW(place_job(p, {"packed", 12, {}}, 3, used), std::invalid_argument);
  try {
    place_job(p, {"packed", 12, {}}, 3, used);
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("jobs[3].placement"), std::string::npos) << e.what();
  }
}

TEST(JobPlacement, ExplicitOverlapIsRefused) {
  const auto p = cluster12();
  std::vector<bool> used(48, false);
  const auto a = place_job(p, {"explicit", 2, {5, 3}}, 0, used);
  EXPECT_EQ(a, (std::vector<std::uint32_t>{5, 3}));
  EXPECT_FALSE(node_aligned(a, 4));  // flat rings: rank 0 is not on local GPU 0
  EXPECT_THROW(place_job(p, {"explicit", 1, {3}}, 1, used), std::invalid_argument);
  // A node policy no longer gets node 0 or 1: GPU 3 and 5 are taken.
  EXPECT_EQ(nodes_of(place_job(p, {"packed", 4, {}}, 2, used)), (std::vector<std::uint32_t>{2}));
}

}  // namespace
}  // namespace warpsim::experiment
