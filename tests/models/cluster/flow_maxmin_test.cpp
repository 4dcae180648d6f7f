// The flow network's local re-sharing (models/cluster/flow_network.cpp) against a reference max-min fair
// allocation: progressive filling over all flows in flight, written plainly here. Random flow starts and
// completions on 3-tier fat trees (full bisection and 3:1 oversubscribed, unequal tier speeds, NVLink
// paths inside a node); after every event each flow's rate must match the reference. Then the whole
// sequence is reversed (digest restored at every step) and forwarded again (the same digests: rollback
// leaves nothing behind that could change a re-execution, which the sync modes' equality relies on).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "engine/lp_context.hpp"
#include "models/cluster/fat_tree.hpp"
#include "models/cluster/flow_network.hpp"
#include "tests/models/cluster/lp_harness.hpp"

namespace warpsim::cluster {
namespace {

using Flows = std::map<FlowId, FlowNetworkLp::Flow>;

// Max-min fair rates by progressive filling over every flow: the lowest fair level of any link with
// unfrozen flows freezes that link's flows; repeat until all are frozen.
std::map<FlowId, double> reference_max_min(const FlowNetworkLp& type, const Flows& flows) {
  std::map<FlowNetworkLp::LinkKey, double> residual;
  std::map<FlowNetworkLp::LinkKey, int> unfrozen;
  for (const auto& [id, f] : flows) {
    for (std::uint32_t h = 0; h < f.hops; ++h) {
      residual[f.path[h]] = type.capacity(f.path[h]);
      ++unfrozen[f.path[h]];
    }
  }
  std::map<FlowId, double> rate;
  while (rate.size() < flows.size()) {
    double level = std::numeric_limits<double>::infinity();
    FlowNetworkLp::LinkKey bottleneck = 0;
    for (const auto& [link, n] : unfrozen) {
      if (n > 0 && residual[link] / n < level) {
        level = residual[link] / n;
        bottleneck = link;
      }
    }
    for (const auto& [id, f] : flows) {
      if (rate.count(id) != 0) continue;
      const bool crosses =
          std::find(f.path.begin(), f.path.begin() + f.hops, bottleneck) != f.path.begin() + f.hops;
      if (!crosses) continue;
      rate[id] = level;
      for (std::uint32_t h = 0; h < f.hops; ++h) {
        residual[f.path[h]] -= level;
        --unfrozen[f.path[h]];
      }
    }
  }
  return rate;
}

struct Case {
  const char* name;
  double oversubscription;
  std::array<double, 3> gbps;
};

class FlowMaxMin : public ::testing::TestWithParam<Case> {};

TEST_P(FlowMaxMin, MatchesReferenceAndRollsBackExactly) {
  const Case& c = GetParam();
  ClusterParams p;
  p.nodes = 16;
  p.gpus_per_node = 2;
  p.tiers = 3;
  p.radix = 8;
  p.oversubscription = c.oversubscription;
  for (std::size_t i = 0; i < 3; ++i) p.links[i] = {c.gbps[i], 500 * kPicosPerNano};
  p.fidelity = Fidelity::kFlow;
  const FatTree topo(p);
  const std::uint32_t gpus = p.nodes * p.gpus_per_node;
  FlowNetworkLp type(topo);
  CountingScheduler scheduler;
  LpContext ctx(scheduler, kMaxPayloadBytes);
  const LpId lp = topo.flow_network_lp();
  const std::uint32_t slot = type.add_lp(lp);
  std::mt19937_64 rng(7);

  auto forward = [&](RecordedEvent& e) {
    ctx.bind(lp, e.time, e.key, e.kind, e.payload.data(), 7);
    type.forward(slot, ctx);
  };
  std::vector<std::uint64_t> digests;  // after each event
  double worst = 0;
  std::vector<RecordedEvent> events;  // generated as we go: completions pick a flow in flight
  SimTime now = 0;
  for (std::uint64_t i = 0; i < 2000; ++i) {
    now += rng() % 1000 * kPicosPerNano / 10;
    RecordedEvent e{now, kFlowStart, EventKey{now, i + 1, static_cast<LpId>(100 + rng() % gpus)}, {}};
    const Flows& flows = type.state(slot).flows;
    // Grow to ~100 flows in flight, then hover there.
    const bool end = !flows.empty() && rng() % (flows.size() > 100 ? 2 : 4) == 0;
    if (end) {
      auto it = flows.begin();
      std::advance(it, static_cast<long>(rng() % flows.size()));
      FlowDone d;
      d.flow = it->first;
      d.version = it->second.version;
      e.kind = kFlowDone;
      e.key.src = lp;
      std::memcpy(e.payload.data(), &d, sizeof d);
    } else {
      FlowStart m;
      m.src_gpu = static_cast<std::uint32_t>(rng() % gpus);
      m.dst_gpu = static_cast<std::uint32_t>((m.src_gpu + 1 + rng() % (gpus - 1)) % gpus);
      m.tag = static_cast<std::uint32_t>(rng() % 5);
      m.bytes = 1 + rng() % (8 << 20);
      std::memcpy(e.payload.data(), &m, sizeof m);
    }
    events.push_back(e);
    forward(e);
    digests.push_back(type.digest(slot));
    const Flows& after = type.state(slot).flows;
    const auto expected = reference_max_min(type, after);
    for (const auto& [id, f] : after) {
      const double want = expected.at(id);
      worst = std::max(worst, std::abs(f.rate - want) / want);
      ASSERT_NEAR(f.rate / want, 1.0, 1e-8) << "flow " << id.src << ":" << id.order << " after event "
                                            << digests.size() - 1 << " of " << c.name;
    }
  }

  std::array<char, 32> text{};
  std::snprintf(text.data(), text.size(), "%.3g", worst);
  RecordProperty("worst_relative_rate_error", text.data());
  EXPECT_GT(type.state(slot).stats.peak_active, 80u);
  EXPECT_GT(type.state(slot).stats.flows_completed, events.size() / 4);
  EXPECT_GT(type.state(slot).stats.schedules, events.size());

  for (std::size_t i = events.size(); i-- > 0;) {
    ASSERT_EQ(type.digest(slot), digests[i]) << "before reversing event " << i;
    RecordedEvent& e = events[i];
    ctx.bind(lp, e.time, e.key, e.kind, e.payload.data(), 7);
    type.reverse(slot, ctx);
  }
  EXPECT_TRUE(type.state(slot).flows.empty());
  EXPECT_TRUE(type.state(slot).links.empty());
  for (std::size_t i = 0; i < events.size(); ++i) {
    forward(events[i]);
    ASSERT_EQ(type.digest(slot), digests[i]) << "re-forwarding event " << i;
  }
  for (std::size_t i = 0; i < events.size(); ++i) type.commit(slot, ctx);
  EXPECT_TRUE(type.state(slot).undo.empty());
}

INSTANTIATE_TEST_SUITE_P(FatTrees, FlowMaxMin,
                         ::testing::Values(Case{"full_bisection_400G", 1.0, {400, 400, 400}},
                                           Case{"oversubscribed_3to1_unequal_tiers", 3.0, {400, 200, 100}},
                                           Case{"fast_core", 1.0, {200, 400, 800}}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace warpsim::cluster
