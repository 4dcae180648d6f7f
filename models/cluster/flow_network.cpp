// Flow-level network with max-min fair link sharing (see flow_network.hpp).
#include "models/cluster/flow_network.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace warpsim::cluster {

// Collects the undo record of one forward: each changed flow is saved once, before its first change. Only
// the flow an event starts or ends can be changed twice (created or removed, then re-rated), and it is
// always saved first.
class FlowNetworkLp::Txn {
 public:
  explicit Txn(Undo& undo) : undo_(undo) {}
  void save(const FlowId& id, const std::optional<Flow>& before) {
    if (!undo_.saved.empty() && undo_.saved.front().first == id) return;
    undo_.saved.emplace_back(id, before);
  }

 private:
  Undo& undo_;
};

namespace {

// Relative slack of the fairness checks. The region's rates are computed from the other flows' rates,
// which are themselves rounded, so "saturated" and "no flow is faster" are tested within this margin; a
// rate within it of a fair rate is accepted (error ~1e-9 of a link's capacity; the test compares with a
// from-scratch progressive filling).
constexpr double kTolerance = 1e-9;
// A region flow whose recomputed rate differs from its current one by less than this (relative) keeps
// its rate and its completion event: the difference is rounding, not a change of the allocation.
constexpr double kSameRate = 1e-12;

}  // namespace

double FlowNetworkLp::capacity(LinkKey link) const {
  const PortPeer peer = topo_.peer(static_cast<LpId>(link >> 16), static_cast<std::uint32_t>(link & 0xffff));
  return peer.link.bandwidth_gbps / 8000.0;  // 10^9 bit/s = 1/8000 byte/ps
}

// The packet model's path: the NIC's egress port, then each switch's ECMP choice, up to the destination NIC.
void FlowNetworkLp::route(Flow& f) const {
  const auto& p = topo_.params();
  const std::uint64_t hash = flow_hash(f.src_gpu, f.dst_gpu, f.tag);
  LpId lp = topo_.nic_lp(f.src_gpu);
  f.hops = 0;
  f.tail_latency_ps = p.injection_latency_ps;
  for (;;) {
    const std::uint32_t port = topo_.route(lp, f.src_gpu, f.dst_gpu, hash);
    const PortPeer peer = topo_.peer(lp, port);
    if (f.hops == kMaxHops) throw std::logic_error("flow network: path longer than kMaxHops");
    f.path[f.hops] = (LinkKey{lp} << 16) | port;
    if (f.hops > 0) f.tail_latency_ps += p.switch_latency_ps + peer.link.latency_ps;
    ++f.hops;
    if (topo_.kind_of(peer.lp) == LpKind::kNic) return;
    lp = peer.lp;
  }
}

void FlowNetworkLp::attach(State& s, const FlowId& id, Flow& f) const {
  for (std::uint32_t h = 0; h < f.hops; ++h) {
    const auto [it, fresh] = s.links.try_emplace(f.path[h]);
    Link& link = it->second;
    if (fresh) {
      link.key = f.path[h];
      link.capacity = capacity(f.path[h]);
    }
    const auto at = std::lower_bound(link.flows.begin(), link.flows.end(), id,
                                     [](const Entry& e, const FlowId& x) { return e.id < x; });
    link.flows.insert(at, Entry{id, &f});
    f.link[h] = &link;
  }
}

void FlowNetworkLp::detach(State& s, const FlowId& id, const Flow& f) {
  for (std::uint32_t h = 0; h < f.hops; ++h) {
    const auto it = s.links.find(f.path[h]);
    auto& flows = it->second.flows;
    const auto at = std::lower_bound(flows.begin(), flows.end(), id,
                                     [](const Entry& e, const FlowId& x) { return e.id < x; });
    flows.erase(at);
    if (flows.empty()) s.links.erase(it);
  }
}

void FlowNetworkLp::notify(LpContext& ctx, const Flow& f) const {
  ctx.send(topo_.gpu_lp(f.src_gpu), topo_.params().injection_latency_ps, send_done_kind(f.stream),
           GpuEvent{});
  GpuEvent arrived;
  arrived.peer = f.src_gpu;
  arrived.tag = f.tag;
  ctx.send(topo_.gpu_lp(f.dst_gpu), f.tail_latency_ps, recv_arrived_kind(f.stream), arrived);
}

void FlowNetworkLp::start(State& s, LpContext& ctx, Txn& txn) {
  const auto& m = ctx.payload<FlowStart>();
  const FlowId id{ctx.event_key().src, ctx.event_key().order};
  Flow f;
  f.src_gpu = m.src_gpu;
  f.dst_gpu = m.dst_gpu;
  f.tag = m.tag;
  f.stream = m.stream;
  f.bytes = m.bytes;
  f.remaining_bytes = static_cast<double>(m.bytes);
  f.updated_ps = ctx.now();
  route(f);
  ++s.stats.flows_started;
  if (m.bytes == 0) {  // nothing to share: only the latency
    ++s.stats.flows_completed;
    notify(ctx, f);
    return;
  }
  txn.save(id, std::nullopt);
  Flow& node = s.flows.emplace(id, f).first->second;
  attach(s, id, node);
  s.stats.peak_active = std::max<std::uint64_t>(s.stats.peak_active, s.flows.size());
  const Entry started{id, &node};
  reallocate(s, ctx, node, &started, txn);
}

void FlowNetworkLp::done(State& s, LpContext& ctx, Txn& txn) {
  const auto& d = ctx.payload<FlowDone>();
  const auto it = s.flows.find(d.flow);
  if (it == s.flows.end() || it->second.version != d.version) {
    ++s.stats.stale;
    return;
  }
  const Flow f = it->second;
  txn.save(d.flow, f);
  detach(s, d.flow, f);
  s.flows.erase(it);
  ++s.stats.flows_completed;
  s.stats.bytes_completed += f.bytes;
  notify(ctx, f);
  reallocate(s, ctx, f, nullptr, txn);
}

// Progressive filling of the region's flows, every other flow's rate held fixed: raise the region's rates
// together; when a link is full, its region flows freeze at that level. A heap of links ordered by (fair
// level, link key) finds the next full link; entries made stale by a later change are skipped.
void FlowNetworkLp::fill(std::uint64_t pass) {
  heap_.clear();
  const auto later = [](const HeapItem& a, const HeapItem& b) {
    return a.level != b.level ? a.level > b.level : a.key > b.key;
  };
  auto push = [&](Link& link) {
    heap_.push_back(HeapItem{link.residual / link.unfrozen, link.key, &link, link.heap_version});
    std::push_heap(heap_.begin(), heap_.end(), later);
  };
  for (const Entry& e : region_) {
    for (std::uint32_t h = 0; h < e.flow->hops; ++h) {
      Link& link = *e.flow->link[h];
      if (link.filled == pass) continue;
      link.filled = pass;
      link.residual = link.capacity;
      link.unfrozen = 0;
      link.heap_version = 0;
      for (const Entry& g : link.flows) {
        if (g.flow->region == epoch_) {
          ++link.unfrozen;
        } else {
          link.residual -= g.flow->rate;
        }
      }
      link.residual = std::max(0.0, link.residual);
      push(link);
    }
  }
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    const HeapItem top = heap_.back();
    heap_.pop_back();
    Link& link = *top.link;
    if (top.version != link.heap_version || link.unfrozen == 0) continue;
    for (const Entry& g : link.flows) {
      Flow& f = *g.flow;
      if (f.region != epoch_ || f.frozen == pass) continue;
      f.frozen = pass;
      f.new_rate = top.level;
      for (std::uint32_t h = 0; h < f.hops; ++h) {
        Link& other = *f.link[h];
        other.residual = std::max(0.0, other.residual - top.level);
        --other.unfrozen;
        ++other.heap_version;
        if (other.unfrozen > 0) push(other);
      }
    }
  }
}

// The link's load and fastest flow with the region's new rates (once per pass).
void FlowNetworkLp::measure(Link& link, std::uint64_t pass) const {
  if (link.checked == pass) return;
  link.checked = pass;
  link.load = 0;
  link.max_rate = 0;
  for (const Entry& g : link.flows) {
    const double r = rate_of(*g.flow);
    link.load += r;
    link.max_rate = std::max(link.max_rate, r);
  }
}

// Max-min fairness of one flow: some link of its path is saturated and carries no faster flow.
bool FlowNetworkLp::bottlenecked(Flow& f, std::uint64_t pass) const {
  const double r = rate_of(f);
  for (std::uint32_t h = 0; h < f.hops; ++h) {
    Link& link = *f.link[h];
    measure(link, pass);
    if (link.load >= link.capacity * (1 - kTolerance) && r >= link.max_rate * (1 - kTolerance)) return true;
  }
  return false;
}

void FlowNetworkLp::queue(const Entry& e, std::uint64_t pass) {
  if (e.flow->region == epoch_ || e.flow->queued == pass) return;
  e.flow->queued = pass;
  added_.push_back(e);
}

// Flows outside the region on a link whose load changed keep their rate only if they stay fair.
void FlowNetworkLp::check_neighbours(const Link& link, std::uint64_t pass) {
  for (const Entry& g : link.flows) {
    if (g.flow->region == epoch_ || g.flow->queued == pass) continue;
    if (!bottlenecked(*g.flow, pass)) queue(g, pass);
  }
}

// Re-shares after `seed` started (`started` is then its entry) or ended; see the header for the method.
void FlowNetworkLp::reallocate(State& s, LpContext& ctx, const Flow& seed, const Entry* started, Txn& txn) {
  ++s.stats.reallocations;
  const SimTime now = ctx.now();
  ++epoch_;
  region_.clear();
  dirty_.clear();
  for (std::uint32_t h = 0; h < seed.hops; ++h) {
    const auto it = s.links.find(seed.path[h]);
    if (it != s.links.end()) dirty_.push_back(&it->second);
  }
  if (started != nullptr) {
    started->flow->region = epoch_;
    region_.push_back(*started);
  }
  for (;;) {
    const std::uint64_t pass = ++pass_;
    fill(pass);
    added_.clear();
    for (const Entry& e : region_) {
      Flow& f = *e.flow;
      if (bottlenecked(f, pass)) continue;
      // Unfair: the faster flows on its saturated links must give way; if rounding hides them, take
      // every flow it meets.
      const std::size_t before = added_.size();
      for (std::uint32_t h = 0; h < f.hops; ++h) {
        const Link& link = *f.link[h];
        if (link.load < link.capacity * (1 - kTolerance)) continue;
        for (const Entry& g : link.flows) {
          if (rate_of(*g.flow) > f.new_rate * (1 + kTolerance)) queue(g, pass);
        }
      }
      if (added_.size() == before) {
        for (std::uint32_t h = 0; h < f.hops; ++h) {
          for (const Entry& g : f.link[h]->flows) queue(g, pass);
        }
      }
    }
    for (const Entry& e : region_) {
      for (std::uint32_t h = 0; h < e.flow->hops; ++h) check_neighbours(*e.flow->link[h], pass);
    }
    for (const Link* link : dirty_) check_neighbours(*link, pass);
    if (added_.empty()) break;
    for (const Entry& e : added_) {
      e.flow->region = epoch_;
      region_.push_back(e);
    }
  }

  for (const Entry& e : region_) {
    Flow& f = *e.flow;
    const double r = f.new_rate;
    if (f.version != 0 && std::abs(r - f.rate) <= kSameRate * f.rate) continue;  // its completion holds
    if (!(r > 0)) throw std::logic_error("flow network: a flow got no bandwidth");
    txn.save(e.id, f);
    f.remaining_bytes = std::max(0.0, f.remaining_bytes - f.rate * static_cast<double>(now - f.updated_ps));
    f.updated_ps = now;
    f.rate = r;
    ++f.version;
    ++s.stats.schedules;
    const double ps = std::ceil(f.remaining_bytes / r);
    if (ps > 1e18) throw std::logic_error("flow network: completion beyond the clock's range");
    FlowDone d;
    d.flow = e.id;
    d.version = f.version;
    ctx.send(s.id, static_cast<SimTime>(ps), kFlowDone, d);
  }
  ++epoch_;  // rate_of() reads the stored rates again
}

void FlowNetworkLp::forward(std::uint32_t slot, LpContext& ctx) {
  State& s = mutable_state(slot);
  Undo undo;
  undo.stats = s.stats;
  Txn txn(undo);
  switch (ctx.kind()) {
    case kFlowStart:
      start(s, ctx, txn);
      break;
    case kFlowDone:
      done(s, ctx, txn);
      break;
    default:
      throw std::logic_error("flow network: unexpected event kind " + std::to_string(ctx.kind()));
  }
  s.undo.push_back(std::move(undo));
}

void FlowNetworkLp::reverse(std::uint32_t slot, LpContext&) {
  State& s = mutable_state(slot);
  Undo undo = std::move(s.undo.back());
  s.undo.pop_back();
  for (auto it = undo.saved.rbegin(); it != undo.saved.rend(); ++it) {
    const auto& [id, before] = *it;
    const auto now = s.flows.find(id);
    if (!before) {  // started by this event
      detach(s, id, now->second);
      s.flows.erase(now);
    } else if (now == s.flows.end()) {  // ended by this event
      attach(s, id, s.flows.emplace(id, *before).first->second);
    } else {
      // The saved copy's link records may be gone: a later event (already reversed) may have ended the
      // flow and emptied a link, and its reverse re-attached the flow to new records.
      const auto links = now->second.link;
      now->second = *before;
      now->second.link = links;
    }
  }
  s.stats = undo.stats;
}

void FlowNetworkLp::commit(std::uint32_t slot, LpContext&) {
  mutable_state(slot).undo.pop_front();
}

std::uint64_t FlowNetworkLp::digest(std::uint32_t slot) const {
  const State& s = state(slot);
  std::uint64_t h = murmur3_fmix64(s.id + 29);
  const Stats& t = s.stats;
  for (std::uint64_t v : {t.flows_started, t.flows_completed, t.bytes_completed, t.reallocations, t.schedules,
                          t.stale, t.peak_active, std::uint64_t{s.links.size()}}) {
    h = murmur3_fmix64(h ^ v);
  }
  for (const auto& [id, f] : s.flows) {
    for (std::uint64_t v : {id.src, id.order, std::uint64_t{f.version}, std::bit_cast<std::uint64_t>(f.rate),
                            std::bit_cast<std::uint64_t>(f.remaining_bytes), f.updated_ps}) {
      h = murmur3_fmix64(h ^ v);
    }
  }
  return h;
}

}  // namespace warpsim::cluster
