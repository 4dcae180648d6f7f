// Flow-level network (network.fidelity = flow): one logical process that holds every message in flight as
// a fluid flow and gives each flow its max-min fair share of the links on its path.
// A message costs a handful of events instead of packets x hops: its start (from the source NIC), its
// completion, and one more completion per rate change caused by flows starting or ending on shared links.
// Paths and ECMP choices are the packet model's (same route() and flow hash), so both fidelities load the
// same links.
//
// Re-sharing is local: a flow start or end re-computes only the *region* of flows whose rates can change,
// not the whole connected component (at 100k GPUs the data-parallel flows join the fabric into one
// component of ~100k flows). The region starts at the new flow (or empty at an end), gets rates by
// progressive filling with every other flow's rate held fixed, and grows while the result is not max-min
// fair: a flow is fair iff it has a bottleneck, a saturated link on which no flow is faster. Only flows on
// links whose load changed can lose their bottleneck, so only they are checked; a region flow without one
// pulls in the faster flows on its saturated links. When nothing is added, every flow has a bottleneck and
// the allocation is the max-min fair one (up to kTolerance, see flow_network.cpp). Per-link flow lists are
// sorted by flow id, so every sum and every tie-break runs in an order that depends only on the state.
//
// Timing of one message of S bytes: the GPU posts it (injection latency to the NIC), the NIC hands it to
// the flow network after the first link's latency, the flow drains at its (changing) rate, then the
// sender's GPU is told after the injection latency and the receiver's after the remaining path latency
// (later links, switch hops) plus the injection latency. Store-and-forward and queueing delays of packets
// are not modelled; congestion shows as lower rates.
//
// Rollback: a completion scheduled for an old rate is not retracted; each flow carries a rate version and
// a completion whose version is stale is ignored. Forward keeps an undo record per event (the flows it
// changed, as they were, and the counters); reverse restores it and commit drops it. Rates are doubles,
// but computed by the same operations in the same order in every sync mode, so results are identical.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "models/cluster/cluster_events.hpp"
#include "models/cluster/cluster_lp_type.hpp"

namespace warpsim::cluster {

// The flow network's state and the records it is made of (FlowNetworkLp::Flow etc. through inheritance),
// declared ahead of the type so that SlottedLpType can hold the State.
struct FlowNetworkTypes {
  static constexpr std::size_t kMaxHops = kMaxFlowPathLinks;
  using LinkKey = std::uint64_t;  // (egress LP << 16) | port

  struct Link;
  struct Flow {
    std::uint32_t src_gpu = 0, dst_gpu = 0, tag = 0;
    std::uint32_t version = 0;   // bumped whenever the rate changes; 0 = no rate yet
    double remaining_bytes = 0;  // as of updated_ps
    double rate = 0;             // bytes per picosecond
    SimTime updated_ps = 0;
    SimTime tail_latency_ps = 0;  // last byte out -> receiving GPU told
    std::uint64_t bytes = 0;
    std::uint32_t hops = 0;
    std::uint8_t stream = 0;  // the GPU stream the message belongs to
    std::array<LinkKey, kMaxHops> path{};
    // Scratch of reallocate(), not state (never saved, digested or compared): the path's link records
    // (set by attach(), valid while the flow is attached) and the marks and rate of the current pass.
    std::array<Link*, kMaxHops> link{};
    std::uint64_t region = 0, frozen = 0, queued = 0;
    double new_rate = 0;
  };
  struct Entry {
    FlowId id;
    Flow* flow;
  };
  struct Link {
    LinkKey key = 0;
    double capacity = 0;       // bytes per picosecond
    std::vector<Entry> flows;  // sorted by id: the order of every sum over the link
    // Scratch of reallocate(), valid for the pass they are stamped with.
    std::uint64_t filled = 0, checked = 0;
    double residual = 0, load = 0, max_rate = 0;
    std::uint32_t unfrozen = 0, heap_version = 0;
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
    std::map<FlowId, Flow> flows;             // in flight
    std::unordered_map<LinkKey, Link> links;  // links carrying at least one flow (lookup only)
    Stats stats;
    std::deque<Undo> undo;  // per forwarded, not yet committed event, oldest first
  };
};

class FlowNetworkLp final : public FlowNetworkTypes, public ClusterLpType<FlowNetworkTypes::State> {
 public:
  explicit FlowNetworkLp(const Topology& topology) : ClusterLpType(topology) {}
  std::string_view name() const override { return "flow_network"; }
  void forward(std::uint32_t slot, LpContext& ctx) override;
  void reverse(std::uint32_t slot, LpContext& ctx) override;
  void commit(std::uint32_t slot, LpContext& ctx) override;
  std::uint64_t digest(std::uint32_t slot) const override;
  void save(std::uint32_t slot, std::ostream& out) const override;
  void load(std::uint32_t slot, std::istream& in) override;

  // Capacity of a link in bytes per picosecond.
  double capacity(LinkKey link) const;

 private:
  class Txn;
  void start(State& s, LpContext& ctx, Txn& txn);
  void done(State& s, LpContext& ctx, Txn& txn);
  void route(Flow& f) const;
  void notify(LpContext& ctx, const Flow& f) const;
  void reallocate(State& s, LpContext& ctx, const Flow& seed, const Entry* started, Txn& txn);
  void fill(std::uint64_t pass);
  void measure(Link& link, std::uint64_t pass) const;
  bool bottlenecked(Flow& f, std::uint64_t pass) const;
  void check_neighbours(const Link& link, std::uint64_t pass);
  void queue(const Entry& e, std::uint64_t pass);
  double rate_of(const Flow& f) const { return f.region == epoch_ ? f.new_rate : f.rate; }

 public:
  // Links the flow's path (f must be the flow's node in s.flows: the link lists point at it).
  void attach(State& s, const FlowId& id, Flow& f) const;
  static void detach(State& s, const FlowId& id, const Flow& f);

 private:
  // Scratch of reallocate(): epoch_ numbers re-sharings and pass_ their filling passes; both only grow
  // (never rolled back), so marks left in restored flows are always stale.
  std::uint64_t epoch_ = 0, pass_ = 0;
  std::vector<Entry> region_, added_;
  std::vector<Link*> dirty_;
  struct HeapItem {
    double level;
    LinkKey key;
    Link* link;
    std::uint32_t version;
  };
  std::vector<HeapItem> heap_;
};

}  // namespace warpsim::cluster
