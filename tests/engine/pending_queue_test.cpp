// The pending queue pops in exact key order, including ties on time broken by order and sender.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "engine/pending_queue.hpp"

namespace warpsim {

TEST(PendingQueue, PopsInKeyOrderUnderRandomInterleaving) {
  std::mt19937_64 gen(11);
  PendingQueue q;
  std::vector<PendingEntry> reference;
  auto less = [](const PendingEntry& a, const PendingEntry& b) { return a.before(b); };
  std::uint32_t next_index = 0;
  for (int step = 0; step < 20000; ++step) {
    if (q.empty() || gen() % 3 != 0) {
      // Few distinct times so that the tie-breaks decide most comparisons.
      // Keys are unique (as in the engine) through src; time and order collide often.
      PendingEntry e{gen() % 50, gen() % 4, static_cast<LpId>(next_index * 7919u % 100003u), next_index};
      ++next_index;
      q.push(e);
      reference.push_back(e);
    } else {
      auto it = std::min_element(reference.begin(), reference.end(), less);
      ASSERT_EQ(q.top().index, it->index);
      reference.erase(it);
      q.pop();
    }
    ASSERT_EQ(q.size(), reference.size());
  }
}

}  // namespace warpsim
