// Flow-level network with max-min fair link sharing (see flow_network.hpp).
#include "models/cluster/flow_network.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace warpsim::cluster {

// Collects the undo record of one forward: each touched flow is saved once, before its first change.
class FlowNetworkLp::Txn {
 public:
  explicit Txn(Undo& undo) : undo_(undo) {}
  void save(const FlowId& id, const std::optional<Flow>& before) {
    if (seen_.insert(id).second) undo_.saved.emplace_back(id, before);
  }

 private:
  Undo& undo_;
  std::set<FlowId> seen_;
};

std::uint32_t FlowNetworkLp::add_lp(LpId id) {
  State s;
  s.id = id;
  states_.push_back(std::move(s));
  return static_cast<std::uint32_t>(states_.size() - 1);
}

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

void FlowNetworkLp::attach(State& s, const FlowId& id, const Flow& f) {
  for (std::uint32_t h = 0; h < f.hops; ++h) s.links[f.path[h]].insert(id);
}

void FlowNetworkLp::detach(State& s, const FlowId& id, const Flow& f) {
  for (std::uint32_t h = 0; h < f.hops; ++h) {
    const auto it = s.links.find(f.path[h]);
    it->second.erase(id);
    if (it->second.empty()) s.links.erase(it);
  }
}

void FlowNetworkLp::notify(LpContext& ctx, const Flow& f) const {
  ctx.send(topo_.gpu_lp(f.src_gpu), topo_.params().injection_latency_ps, kGpuSendDone, GpuEvent{});
  GpuEvent arrived;
  arrived.peer = f.src_gpu;
  arrived.tag = f.tag;
  ctx.send(topo_.gpu_lp(f.dst_gpu), f.tail_latency_ps, kGpuRecvArrived, arrived);
}

void FlowNetworkLp::start(State& s, LpContext& ctx, Txn& txn) {
  const auto& m = ctx.payload<FlowStart>();
  const FlowId id{ctx.event_key().src, ctx.event_key().order};
  Flow f;
  f.src_gpu = m.src_gpu;
  f.dst_gpu = m.dst_gpu;
  f.tag = m.tag;
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
  s.flows.emplace(id, f);
  attach(s, id, f);
  s.stats.peak_active = std::max<std::uint64_t>(s.stats.peak_active, s.flows.size());
  reallocate(s, ctx, f, txn);
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
  reallocate(s, ctx, f, txn);
}

// Progressive filling over the component of `seed`'s links: raise all rates together; when a link is full,
// its flows freeze at that level and leave the others its spare capacity.
void FlowNetworkLp::reallocate(State& s, LpContext& ctx, const Flow& seed, Txn& txn) {
  ++s.stats.reallocations;
  const SimTime now = ctx.now();
  std::set<LinkKey> comp_links;
  std::set<FlowId> comp_flows;
  std::vector<LinkKey> frontier;
  for (std::uint32_t h = 0; h < seed.hops; ++h) {
    if (s.links.count(seed.path[h]) != 0 && comp_links.insert(seed.path[h]).second)
      frontier.push_back(seed.path[h]);
  }
  while (!frontier.empty()) {
    const LinkKey link = frontier.back();
    frontier.pop_back();
    for (const FlowId& id : s.links.at(link)) {
      if (!comp_flows.insert(id).second) continue;
      const Flow& f = s.flows.at(id);
      for (std::uint32_t h = 0; h < f.hops; ++h) {
        if (comp_links.insert(f.path[h]).second) frontier.push_back(f.path[h]);
      }
    }
  }
  if (comp_flows.empty()) return;

  // Bring every flow's remaining bytes up to now at its old rate.
  for (const FlowId& id : comp_flows) {
    Flow& f = s.flows.at(id);
    txn.save(id, f);
    f.remaining_bytes = std::max(0.0, f.remaining_bytes - f.rate * static_cast<double>(now - f.updated_ps));
    f.updated_ps = now;
  }

  struct Residual {
    double capacity;
    std::uint32_t unfrozen;
  };
  std::map<LinkKey, Residual> residual;
  for (const LinkKey link : comp_links) {
    residual.emplace(link, Residual{capacity(link), static_cast<std::uint32_t>(s.links.at(link).size())});
  }
  std::map<FlowId, double> rate;
  while (rate.size() < comp_flows.size()) {
    double level = std::numeric_limits<double>::infinity();
    for (const auto& [link, r] : residual) {
      if (r.unfrozen > 0) level = std::min(level, r.capacity / r.unfrozen);
    }
    // Links within rounding of the level are bottlenecks too (exact ties in exact arithmetic).
    const double cutoff = level * (1 + 1e-12);
    for (auto& [link, r] : residual) {
      if (r.unfrozen == 0 || r.capacity / r.unfrozen > cutoff) continue;
      for (const FlowId& id : s.links.at(link)) {
        if (!rate.emplace(id, level).second) continue;
        const Flow& f = s.flows.at(id);
        for (std::uint32_t h = 0; h < f.hops; ++h) {
          Residual& other = residual.at(f.path[h]);
          other.capacity = std::max(0.0, other.capacity - level);
          --other.unfrozen;
        }
      }
    }
  }

  for (const auto& [id, r] : rate) {
    Flow& f = s.flows.at(id);
    if (f.version != 0 && f.rate == r) continue;  // its completion event still holds
    if (!(r > 0)) throw std::logic_error("flow network: a flow got no bandwidth");
    f.rate = r;
    ++f.version;
    ++s.stats.schedules;
    const double ps = std::ceil(f.remaining_bytes / r);
    if (ps > 1e18) throw std::logic_error("flow network: completion beyond the clock's range");
    FlowDone d;
    d.flow = id;
    d.version = f.version;
    ctx.send(s.id, static_cast<SimTime>(ps), kFlowDone, d);
  }
}

void FlowNetworkLp::forward(std::uint32_t slot, LpContext& ctx) {
  State& s = states_[slot];
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
  State& s = states_[slot];
  Undo undo = std::move(s.undo.back());
  s.undo.pop_back();
  for (auto it = undo.saved.rbegin(); it != undo.saved.rend(); ++it) {
    const auto& [id, before] = *it;
    const auto now = s.flows.find(id);
    if (!before) {  // started by this event
      detach(s, id, now->second);
      s.flows.erase(now);
    } else if (now == s.flows.end()) {  // ended by this event
      s.flows.emplace(id, *before);
      attach(s, id, *before);
    } else {
      now->second = *before;
    }
  }
  s.stats = undo.stats;
}

void FlowNetworkLp::commit(std::uint32_t slot, LpContext&) {
  states_[slot].undo.pop_front();
}

std::uint64_t FlowNetworkLp::digest(std::uint32_t slot) const {
  const State& s = states_[slot];
  std::uint64_t h = mix64(s.id + 29);
  const Stats& t = s.stats;
  for (std::uint64_t v : {t.flows_started, t.flows_completed, t.bytes_completed, t.reallocations, t.schedules,
                          t.stale, t.peak_active, std::uint64_t{s.links.size()}}) {
    h = mix64(h ^ v);
  }
  for (const auto& [id, f] : s.flows) {
    for (std::uint64_t v : {id.src, id.order, std::uint64_t{f.version}, std::bit_cast<std::uint64_t>(f.rate),
                            std::bit_cast<std::uint64_t>(f.remaining_bytes), f.updated_ps}) {
      h = mix64(h ^ v);
    }
  }
  return h;
}

}  // namespace warpsim::cluster
