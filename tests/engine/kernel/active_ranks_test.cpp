// The shared-node rule (engine/kernel/active_ranks.hpp): how many of a node's ranks simulate for a measured
// load. The probe itself, under mpiexec with busy processes beside it, is tests/jobs/cli/shared_node.sh.
#include "engine/kernel/active_ranks.hpp"

#include <gtest/gtest.h>

namespace warpsim {
namespace {

TEST(ActiveRanks, AQuietNodeKeepsEveryRankUpToItsCpus) {
  EXPECT_EQ(active_ranks_for(2, 0.0, 2), 2);
  EXPECT_EQ(active_ranks_for(16, 0.05, 16), 16);  // a shell or daemon waking up is forgiven
  EXPECT_EQ(active_ranks_for(16, 0.0, 4), 4);     // never more ranks than were started
  EXPECT_EQ(active_ranks_for(2, 0.0, 4), 2);      // 4 ranks on 2 CPUs: one per CPU
}

TEST(ActiveRanks, ABusyCpuTakesItsRankAway) {
  EXPECT_EQ(active_ranks_for(2, 1.0, 2), 1);  // the benchmark's hog: one full core
  EXPECT_EQ(active_ranks_for(2, 0.5, 2), 1);  // half a core busy: no rank has a CPU of its own
  EXPECT_EQ(active_ranks_for(2, 0.84, 2), 1);
  EXPECT_EQ(active_ranks_for(16, 4.0, 16), 12);
  EXPECT_EQ(active_ranks_for(16, 3.9, 16), 12);
}

TEST(ActiveRanks, AtLeastOneRankSimulates) {
  EXPECT_EQ(active_ranks_for(2, 2.0, 2), 1);
  EXPECT_EQ(active_ranks_for(1, 5.0, 8), 1);
  EXPECT_EQ(active_ranks_for(0, 0.0, 2), 1);  // no CPU at all (the probe keeps every rank instead)
}

TEST(ActiveRanks, PolicyNames) {
  SharedNodePolicy policy = SharedNodePolicy::kKeep;
  EXPECT_TRUE(parse_shared_node_policy("shrink", policy));
  EXPECT_EQ(policy, SharedNodePolicy::kShrink);
  EXPECT_TRUE(parse_shared_node_policy("keep", policy));
  EXPECT_EQ(policy, SharedNodePolicy::kKeep);
  EXPECT_FALSE(parse_shared_node_policy("auto", policy));
  EXPECT_FALSE(parse_shared_node_policy("", policy));
}

}  // namespace
}  // namespace warpsim
