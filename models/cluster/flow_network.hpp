// Flow-level network (network.fidelity = flow): one logical process that holds every message in flight as
// a fluid flow and gives each flow its max-min fair share of the links on its path (progressive filling).
// A message costs a handful of events instead of packets x hops: its start (from the source NIC), its
// completion, and one more completion per rate change caused by flows starting or ending on shared links.
// Only the connected component (flows linked by shared links) of a starting or ending flow is re-shared,
// since a max-min allocation decomposes over components. Paths and ECMP choices are the packet model's
// (same route() and flow hash), so both fidelities load the same links.
//
// Timing of one message of S bytes: the GPU posts it (injection latency to the NIC), the NIC hands it to
// the flow network after the first link's latency, the flow drains at its (changing) rate, then the
// sender's GPU is told after the injection latency and the receiver's after the remaining path latency
// (later links, switch hops) plus the injection latency. Store-and-forward and queueing delays of packets
// are not modelled; congestion shows as lower rates.
//
// Rollback: a completion scheduled for an old rate is not retracted; each flow carries a rate version and
// a completion whose version is stale is ignored. Forward keeps an undo record per event (the flows it
// touched, as they were, and the counters); reverse restores it and commit drops it. Rates are doubles,
// but computed by the same operations in the same order in every sync mode, so results are identical.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "engine/lp_type.hpp"
#include "models/cluster/cluster_events.hpp"
#include "models/cluster/topology.hpp"

namespace warpsim::cluster {

class FlowNetworkLp final : public LpType {
 public:
  static constexpr std::size_t kMaxHops = kMaxFlowPathLinks;
  using LinkKey = std::uint64_t;  // (egress LP << 16) | port

  struct Flow {
    std::uint32_t src_gpu = 0, dst_gpu = 0, tag = 0;
    std::uint32_t version = 0;   // bumped whenever the rate changes; 0 = no rate yet
    double remaining_bytes = 0;  // as of updated_ps
    double rate = 0;             // bytes per picosecond
    SimTime updated_ps = 0;
    SimTime tail_latency_ps = 0;  // last byte out -> receiving GPU told
    std::uint64_t bytes = 0;
    std::uint32_t hops = 0;
    std::array<LinkKey, kMaxHops> path{};
  };
  struct Stats {
    std::uint64_t flows_started = 0, flows_completed = 0, bytes_completed = 0;
    std::uint64_t reallocations = 0;  // max-min recomputations (one per flow start or end)
    std::uint64_t schedules = 0;      // completion events scheduled (first rate or a changed rate)
    std::uint64_t stale = 0;          // completion events ignored because the rate changed since
    std::uint64_t peak_active = 0;    // most flows in flight at once
  };
  // What reverse needs to undo one forward: touched flows as they were (nullopt: did not exist).
  struct Undo {
    std::vector<std::pair<FlowId, std::optional<Flow>>> saved;
    Stats stats;
  };
  struct State {
    LpId id = 0;
    std::map<FlowId, Flow> flows;               // in flight
    std::map<LinkKey, std::set<FlowId>> links;  // links carrying at least one flow
    Stats stats;
    std::deque<Undo> undo;  // per forwarded, not yet committed event, oldest first
  };

  explicit FlowNetworkLp(const Topology& topology) : topo_(topology) {}
  std::string_view name() const override { return "flow_network"; }
  std::size_t state_bytes() const override { return sizeof(State); }
  std::uint32_t add_lp(LpId id) override;
  void init(std::uint32_t, LpContext&) override {}
  void forward(std::uint32_t slot, LpContext& ctx) override;
  void reverse(std::uint32_t slot, LpContext& ctx) override;
  void commit(std::uint32_t slot, LpContext& ctx) override;
  std::uint64_t digest(std::uint32_t slot) const override;
  bool checkpointable() const override { return true; }
  void save(std::uint32_t slot, std::ostream& out) const override;
  void load(std::uint32_t slot, std::istream& in) override;

  std::size_t size() const { return states_.size(); }
  const State& state(std::uint32_t slot) const { return states_[slot]; }
  // Capacity of a link in bytes per picosecond.
  double capacity(LinkKey link) const;

 private:
  class Txn;
  void start(State& s, LpContext& ctx, Txn& txn);
  void done(State& s, LpContext& ctx, Txn& txn);
  void route(Flow& f) const;
  void notify(LpContext& ctx, const Flow& f) const;
  void reallocate(State& s, LpContext& ctx, const Flow& seed, Txn& txn);
  static void attach(State& s, const FlowId& id, const Flow& f);
  static void detach(State& s, const FlowId& id, const Flow& f);

  const Topology& topo_;
  std::vector<State> states_;
};

}  // namespace warpsim::cluster
