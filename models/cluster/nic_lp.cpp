// NIC logical process (see nic_lp.hpp).
#include "models/cluster/nic_lp.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "models/cluster/cluster_events.hpp"

namespace warpsim::cluster {

namespace {
std::uint64_t packet_size(const TxEvent& tx, std::uint32_t packet_bytes) {
  return std::min<std::uint64_t>(packet_bytes, tx.msg_bytes - tx.offset);
}
}  // namespace

void NicLp::forward(std::uint32_t slot, LpContext& ctx) {
  State& s = mutable_state(slot);
  const SimTime now = ctx.now();
  if (series_ != nullptr) series_->prefetch_nic(slot);
  if (ctx.kind() == kNicTx) {
    auto& tx = ctx.payload<TxEvent>();
    const std::uint32_t port = topo_.route(s.id, tx.src_gpu, tx.dst_gpu, 0);
    const PortPeer peer = topo_.peer(s.id, port);
    const std::uint64_t bytes = packet_size(tx, topo_.params().packet_bytes);
    const SimTime ser = serialization_ps(bytes, peer.link.bandwidth_gbps);
    tx.saved_busy = s.busy_until[port];
    tx.port = static_cast<std::uint16_t>(port);  // a NIC has a handful of ports
    const SimTime done = std::max(now, s.busy_until[port]) + ser;
    s.busy_until[port] = done;
    s.bytes_tx += bytes;
    ++s.packets_tx;
    s.busy_ps += ser;
    const bool last = tx.offset + bytes >= tx.msg_bytes;
    Packet p;
    p.src_gpu = tx.src_gpu;
    p.dst_gpu = tx.dst_gpu;
    p.tag = tx.tag;
    p.bytes = static_cast<std::uint32_t>(bytes);
    p.last = last ? 1 : 0;
    p.stream = tx.stream;
    p.in_ser_ps = saturated_ps(ser);
    ctx.send(peer.lp, done - now + peer.link.latency_ps, kPacket, p);
    if (last) {
      ++s.messages_tx;
      ctx.send(topo_.gpu_lp(tx.src_gpu), done - now + topo_.params().injection_latency_ps,
               send_done_kind(tx.stream), GpuEvent{});
    } else {
      TxEvent next = tx;
      next.offset += bytes;
      next.saved_busy = 0;
      ctx.send(s.id, done - now, kNicTx, next);
    }
  } else if (ctx.kind() == kPacket) {
    const auto& p = ctx.payload<Packet>();
    s.bytes_rx += p.bytes;
    ++s.packets_rx;
    if (p.last) {
      ++s.messages_rx;
      GpuEvent arrived;
      arrived.peer = p.src_gpu;
      arrived.tag = p.tag;
      ctx.send(topo_.gpu_lp(p.dst_gpu), topo_.params().injection_latency_ps, recv_arrived_kind(p.stream),
               arrived);
    }
  } else {
    throw std::logic_error("nic: unexpected event kind " + std::to_string(ctx.kind()));
  }
}

void NicLp::reverse(std::uint32_t slot, LpContext& ctx) {
  State& s = mutable_state(slot);
  if (ctx.kind() == kNicTx) {
    const auto& tx = ctx.payload<TxEvent>();
    const std::uint32_t port = topo_.route(s.id, tx.src_gpu, tx.dst_gpu, 0);
    const PortPeer peer = topo_.peer(s.id, port);
    const std::uint64_t bytes = packet_size(tx, topo_.params().packet_bytes);
    s.busy_until[port] = tx.saved_busy;
    s.bytes_tx -= bytes;
    --s.packets_tx;
    s.busy_ps -= serialization_ps(bytes, peer.link.bandwidth_gbps);
    if (tx.offset + bytes >= tx.msg_bytes) --s.messages_tx;
  } else {
    const auto& p = ctx.payload<Packet>();
    s.bytes_rx -= p.bytes;
    --s.packets_rx;
    if (p.last) --s.messages_rx;
  }
}

void NicLp::commit(std::uint32_t slot, LpContext& ctx) {
  if (series_ == nullptr) return;
  SeriesRecorder& rec = series_->recorder();
  const SeriesRecorder::Component c{series_->nic_kind(), slot};
  const SimTime now = ctx.now();
  if (ctx.kind() == kPacket) {
    rec.add(c, nic_metric::kRxBytes, now, ctx.payload<Packet>().bytes);
    return;
  }
  // The packet forward() serialized: same port (forward saved it), start and length (mirrors forward).
  const auto& tx = ctx.payload<TxEvent>();
  const double gbps = series_->nic_gbps(slot, tx.port);
  const std::uint64_t bytes = packet_size(tx, topo_.params().packet_bytes);
  const SimTime ser = series_->nic_serialization_ps(slot, tx.port, bytes);
  const SimTime start = std::max(now, tx.saved_busy);
  const SimTime end = start + ser;
  const auto b = static_cast<double>(bytes);
  const bool nvlink = series_->nic_nvlink(slot, tx.port);
  const std::uint64_t backlog = tx.saved_busy > now ? bytes_in(tx.saved_busy - now, gbps) : 0;
  const auto depth = static_cast<double>(backlog + bytes);
  // Its bytes wait (start - now), then drain linearly: area = bytes x (wait + ser / 2).
  const double area = b * (static_cast<double>(start - now) + 0.5 * static_cast<double>(ser));
  if (SeriesRecorder::SampleRecord r = rec.current_sample(c, now, end)) {  // the common case
    r.add(nic_metric::kTxBytes, b);
    if (nvlink) r.add(nic_metric::kNvlinkTxBytes, b);
    r.peak(nic_metric::kQueueMax, depth);
    r.add(nic_metric::kQueueMean, area);
    return;
  }
  rec.add_spread(c, nic_metric::kTxBytes, start, end, b);
  if (nvlink) rec.add_spread(c, nic_metric::kNvlinkTxBytes, start, end, b);
  rec.peak(c, nic_metric::kQueueMax, now, depth);
  rec.add_spread(c, nic_metric::kQueueMean, now, end, area);
}

std::uint64_t NicLp::digest(std::uint32_t slot) const {
  const State& s = state(slot);
  std::uint64_t h = murmur3_fmix64(s.id + 7);
  for (std::uint64_t v : {s.busy_until[0], s.busy_until[1], s.bytes_tx, s.bytes_rx, s.packets_tx,
                          s.packets_rx, s.messages_tx, s.messages_rx, s.busy_ps}) {
    h = murmur3_fmix64(h ^ v);
  }
  return h;
}

}  // namespace warpsim::cluster
