// Switch logical process (see switch_lp.hpp).
#include "models/cluster/switch_lp.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "models/cluster/cluster_events.hpp"

namespace warpsim::cluster {

SwitchLp::State SwitchLp::make_state(LpId id) {
  State s;
  s.id = id;
  s.ports.resize(topo_.port_count(id));
  // Packet::saved_port holds an output port in 16 bits.
  if (s.ports.size() > 0x10000) throw std::invalid_argument("switch: more than 65536 output ports");
  return s;
}

SimTime SwitchLp::ready_time(SimTime tail_arrival, std::uint32_t in_ser_ps) const {
  // Cut-through: the head came in_ser_ps before the tail, and the port could start on it from then.
  const SimTime head =
      topo_.params().cut_through ? tail_arrival - std::min<SimTime>(in_ser_ps, tail_arrival) : tail_arrival;
  return head + topo_.params().switch_latency_ps;
}

std::uint64_t SwitchLp::depth(SimTime busy_until, SimTime ready, double gbps, std::uint64_t bytes) {
  return (busy_until > ready ? bytes_in(busy_until - ready, gbps) : 0) + bytes;
}

void SwitchLp::forward(std::uint32_t slot, LpContext& ctx) {
  if (ctx.kind() != kPacket)
    throw std::logic_error("switch: unexpected event kind " + std::to_string(ctx.kind()));
  State& s = mutable_state(slot);
  auto& p = ctx.payload<Packet>();
  const SimTime now = ctx.now();
  const std::uint32_t port = topo_.route(s.id, p.src_gpu, p.dst_gpu, flow_hash(p.src_gpu, p.dst_gpu, p.tag));
  const PortPeer peer = topo_.peer(s.id, port);
  Port& q = s.ports[port];
  p.saved_busy = q.busy_until;
  p.saved_max_depth = q.max_depth_bytes;
  p.saved_port = static_cast<std::uint16_t>(port);
  if (series_ != nullptr) series_->prefetch_port(port0_[slot] + port);
  const SimTime ready = ready_time(now, p.in_ser_ps);
  const std::uint64_t d = depth(q.busy_until, ready, peer.link.bandwidth_gbps, p.bytes);
  q.max_depth_bytes = std::max(q.max_depth_bytes, d);
  if (d > topo_.params().switch_buffer_bytes) ++s.overflows;
  const SimTime ser = serialization_ps(p.bytes, peer.link.bandwidth_gbps);
  // Cut-through into a faster link: the output still cannot end before the tail has come in.
  q.busy_until = std::max(std::max(ready, q.busy_until) + ser, now);
  q.bytes_tx += p.bytes;
  q.busy_ps += ser;
  ++s.packets;
  Packet out = p;
  out.saved_busy = 0;
  out.saved_max_depth = 0;
  out.saved_port = 0;
  out.in_ser_ps = saturated_ps(ser);
  ctx.send(peer.lp, q.busy_until - now + peer.link.latency_ps, kPacket, out);
}

void SwitchLp::reverse(std::uint32_t slot, LpContext& ctx) {
  State& s = mutable_state(slot);
  const auto& p = ctx.payload<Packet>();
  const std::uint32_t port = topo_.route(s.id, p.src_gpu, p.dst_gpu, flow_hash(p.src_gpu, p.dst_gpu, p.tag));
  const PortPeer peer = topo_.peer(s.id, port);
  Port& q = s.ports[port];
  const SimTime ready = ready_time(ctx.now(), p.in_ser_ps);
  if (depth(p.saved_busy, ready, peer.link.bandwidth_gbps, p.bytes) > topo_.params().switch_buffer_bytes) {
    --s.overflows;
  }
  q.busy_until = p.saved_busy;
  q.max_depth_bytes = p.saved_max_depth;
  q.bytes_tx -= p.bytes;
  q.busy_ps -= serialization_ps(p.bytes, peer.link.bandwidth_gbps);
  --s.packets;
}

void SwitchLp::commit(std::uint32_t slot, LpContext& ctx) {
  if (series_ == nullptr) return;
  // The packet forward() queued: same port (forward saved it), ready time, start and length (mirrors
  // forward).
  const auto& p = ctx.payload<Packet>();
  const std::uint32_t local = port0_[slot] + p.saved_port;
  const double gbps = series_->port_gbps(local);
  const SimTime ready = ready_time(ctx.now(), p.in_ser_ps);
  const SimTime start = std::max(ready, p.saved_busy);
  const SimTime end = start + series_->port_serialization_ps(local, p.bytes);
  SeriesRecorder& rec = series_->recorder();
  const SeriesRecorder::Component c{series_->port_kind(), local};
  const auto b = static_cast<double>(p.bytes);
  const std::uint64_t d = depth(p.saved_busy, ready, gbps, p.bytes);
  // Its bytes wait (start - ready), then drain linearly: area = bytes x (wait + serialization / 2).
  const double area = b * (static_cast<double>(start - ready) + 0.5 * static_cast<double>(end - start));
  const bool overflow = d > topo_.params().switch_buffer_bytes;
  if (SeriesRecorder::SampleRecord r = rec.current_sample(c, ready, end)) {  // the common case
    r.add(port_metric::kBytes, b);
    r.peak(port_metric::kQueueMax, static_cast<double>(d));
    r.add(port_metric::kQueueMean, area);
    if (overflow) r.add(port_metric::kOverflows, 1.0);
    return;
  }
  rec.add_spread(c, port_metric::kBytes, start, end, b);
  rec.peak(c, port_metric::kQueueMax, ready, static_cast<double>(d));
  rec.add_spread(c, port_metric::kQueueMean, ready, end, area);
  if (overflow) rec.add(c, port_metric::kOverflows, ready, 1.0);
}

std::uint64_t SwitchLp::digest(std::uint32_t slot) const {
  const State& s = state(slot);
  std::uint64_t h = murmur3_fmix64(murmur3_fmix64(s.id + 13) ^ s.packets);
  h = murmur3_fmix64(h ^ s.overflows);
  for (const Port& q : s.ports) {
    h = murmur3_fmix64(h ^ q.busy_until);
    h = murmur3_fmix64(h ^ q.bytes_tx);
    h = murmur3_fmix64(h ^ q.max_depth_bytes);
    h = murmur3_fmix64(h ^ q.busy_ps);
  }
  return h;
}

}  // namespace warpsim::cluster
