// The pending queue pops in exact key order, including ties on time broken by order and sender.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "engine/kernel/pending_queue.hpp"

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
      PendingEntry e{gen() % 50, gen() % 4, static_cast<LpId>(next_index * 7919u % 100003u), next_index, 0};
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

namespace warpsim {

// The bucketed queue must pop in exact key order whatever the time distribution: wide and narrow spreads,
// inserts below the current bucket (rollback re-inserts), equal times, and the saturated end of time.
TEST(PendingQueue, ExactOrderAcrossDistributions) {
  auto less = [](const PendingEntry& a, const PendingEntry& b) { return a.before(b); };
  for (int scenario = 0; scenario < 5; ++scenario) {
    std::mt19937_64 gen(100 + scenario);
    PendingQueue q;
    std::vector<PendingEntry> reference;
    SimTime now = 0;
    std::uint32_t next_index = 0;
    auto draw_time = [&]() -> SimTime {
      switch (scenario) {
        case 0:
          return now + 1000 + gen() % 10000;  // PHOLD-like
        case 1:
          return now + (gen() % 2 ? 0 : gen() % 1000000000);  // bursts at now and far future
        case 2:
          return now > 500 && gen() % 4 == 0 ? now - gen() % 500 : now + gen() % 50;  // stragglers
        case 3:
          return gen() % 3 ? kTimeInfinity : now + gen() % 7;  // saturated times
        default:
          return 5;  // all equal
      }
    };
    for (int step = 0; step < 40000; ++step) {
      if (reference.empty() || gen() % 5 < 3) {
        PendingEntry e{draw_time(), gen() % 3, static_cast<LpId>(next_index), next_index, 0};
        ++next_index;
        q.push(e);
        reference.push_back(e);
        std::push_heap(reference.begin(), reference.end(), [&](auto& a, auto& b) { return less(b, a); });
      } else {
        ASSERT_FALSE(q.empty());
        ASSERT_EQ(q.top().index, reference.front().index) << "scenario " << scenario << " step " << step;
        now = std::max(now, q.top().time == kTimeInfinity ? now : q.top().time);
        std::pop_heap(reference.begin(), reference.end(), [&](auto& a, auto& b) { return less(b, a); });
        reference.pop_back();
        q.pop();
      }
      ASSERT_EQ(q.size(), reference.size());
    }
  }
}

}  // namespace warpsim
