// Storage target logical process (see storage_lp.hpp).
#include "models/cluster/storage_lp.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "models/cluster/cluster_events.hpp"

namespace warpsim::cluster {

void StorageLp::forward(std::uint32_t slot, LpContext& ctx) {
  if (ctx.kind() != kStorageRequest)
    throw std::logic_error("storage: unexpected event kind " + std::to_string(ctx.kind()));
  State& s = mutable_state(slot);
  auto& r = ctx.payload<StorageEvent>();
  const auto& p = topo_.params();
  const SimTime now = ctx.now();
  r.saved_busy = s.busy_until;
  const SimTime service = serialization_ps(r.bytes, p.storage_bandwidth_gbps);
  s.busy_until = std::max(now, s.busy_until) + service;
  const SimTime done = std::max(s.busy_until, now + serialization_ps(r.bytes, p.storage_client_gbps));
  ++s.requests;
  (r.write ? s.bytes_written : s.bytes_read) += r.bytes;
  s.busy_ps += service;
  ctx.send(topo_.gpu_lp(r.client_gpu), done - now + p.storage_latency_ps, kGpuSendDone, GpuEvent{});
}

void StorageLp::reverse(std::uint32_t slot, LpContext& ctx) {
  State& s = mutable_state(slot);
  const auto& r = ctx.payload<StorageEvent>();
  s.busy_until = r.saved_busy;
  --s.requests;
  (r.write ? s.bytes_written : s.bytes_read) -= r.bytes;
  s.busy_ps -= serialization_ps(r.bytes, topo_.params().storage_bandwidth_gbps);
}

void StorageLp::commit(std::uint32_t slot, LpContext& ctx) {
  if (series_ == nullptr) return;
  // The request forward() queued: same service start, service end and completion (mirrors forward).
  const auto& r = ctx.payload<StorageEvent>();
  const auto& p = topo_.params();
  const SimTime now = ctx.now();
  const SimTime start = std::max(now, r.saved_busy);
  const SimTime served = start + serialization_ps(r.bytes, p.storage_bandwidth_gbps);
  const SimTime done = std::max(served, now + serialization_ps(r.bytes, p.storage_client_gbps));
  SeriesRecorder& rec = series_->recorder();
  const SeriesRecorder::Component c{series_->storage_kind(), slot};
  const auto b = static_cast<double>(r.bytes);
  rec.add_spread(c, r.write ? storage_metric::kWriteBytes : storage_metric::kReadBytes, start, served, b);
  rec.add(c, storage_metric::kRequests, now, 1.0);
  rec.add_spread(c, storage_metric::kQueuedRequests, now, done, static_cast<double>(done - now));
  const std::uint64_t backlog =
      r.saved_busy > now ? bytes_in(r.saved_busy - now, p.storage_bandwidth_gbps) : 0;
  rec.peak(c, storage_metric::kQueueMax, now, static_cast<double>(backlog + r.bytes));
}

std::uint64_t StorageLp::digest(std::uint32_t slot) const {
  const State& s = state(slot);
  std::uint64_t h = murmur3_fmix64(s.id + 29);
  for (std::uint64_t v : {s.busy_until, s.requests, s.bytes_read, s.bytes_written, s.busy_ps})
    h = murmur3_fmix64(h ^ v);
  return h;
}

}  // namespace warpsim::cluster
