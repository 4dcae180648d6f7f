// GPU logical process (see gpu_lp.hpp).
#include "models/cluster/gpu_lp.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "models/cluster/cluster_events.hpp"

namespace warpsim::cluster {

namespace {
constexpr std::uint8_t kComputing = 1, kDone = 2;

std::uint64_t match_key(std::uint32_t peer, std::uint32_t tag) {
  return std::uint64_t{peer} << 32 | tag;
}

// balance[key] += delta, erasing zero entries; returns the new value.
std::int32_t bump(std::map<std::uint64_t, std::int32_t>& balance, std::uint64_t key, std::int32_t delta) {
  auto [it, inserted] = balance.try_emplace(key, 0);
  it->second += delta;
  const std::int32_t value = it->second;
  if (value == 0) balance.erase(it);
  return value;
}
std::int32_t value_of(const std::map<std::uint64_t, std::int32_t>& balance, std::uint64_t key) {
  const auto it = balance.find(key);
  return it == balance.end() ? 0 : it->second;
}
}  // namespace

GpuLp::State GpuLp::make_state(LpId id) {
  State s;
  s.id = id;
  s.gpu = topo_.gpu_of(id);
  return s;
}

// The per-slot side tables: the wait clock, the op cache and the commit notes.
void GpuLp::on_added(std::uint32_t, LpId id) {
  if (series_ != nullptr) series_->add_gpu(id);  // component local index == slot
  clocks_.emplace_back();
  op_cache_.resize(op_cache_.size() + kOpCacheWays);
  notes_.resize(notes_.size() + kCommitNotes);
  note_next_.push_back(0);
}

void GpuLp::init(std::uint32_t, LpContext& ctx) {
  ctx.send(ctx.self(), 0, kGpuStart, GpuEvent{});
}

const GpuOp* GpuLp::fetch(const State& s, std::uint64_t index) const {
  OpCache& c = op_cache_[std::size_t{slot_of_state(s)} * kOpCacheWays + (index % kOpCacheWays)];
  if (c.index != index) {
    const auto op = program_->op(s.gpu, index);
    c.index = index;
    c.end = !op.has_value();
    if (op) c.op = *op;
  }
  return c.end ? nullptr : &c.op;
}

GpuOp GpuLp::op_at(const State& s, std::uint64_t index) const {
  const GpuOp* op = fetch(s, index);
  if (op == nullptr)
    throw std::logic_error("gpu program: op " + std::to_string(index) + " vanished on replay");
  return *op;
}

void GpuLp::note(std::uint32_t slot, std::uint64_t index, const GpuOp& op) {
  std::uint8_t& next = note_next_[slot];
  CommitNote* notes = notes_.data() + std::size_t{slot} * kCommitNotes;
  // Arrivals that leave the GPU blocked on the same Wait note it again: keep one note of it.
  if (notes[(next + kCommitNotes - 1) % kCommitNotes].index == index) return;
  notes[next] = CommitNote::of(index, op);
  next = static_cast<std::uint8_t>((next + 1) % kCommitNotes);
}

GpuLp::CommitNote GpuLp::noted(std::uint32_t slot, std::uint64_t index) const {
  const CommitNote* notes = notes_.data() + std::size_t{slot} * kCommitNotes;
  for (std::size_t i = 0; i < kCommitNotes; ++i)
    if (notes[i].index == index) return notes[i];
  return CommitNote::of(index, op_at(state(slot), index));
}

void GpuLp::advance(State& s, LpContext& ctx) {
  const std::uint32_t gpu = s.gpu;
  while (!s.computing && !s.done) {
    const GpuOp* next = fetch(s, s.pc);
    if (next == nullptr) {
      s.done = true;
      s.finish_ps = ctx.now();
      return;
    }
    const GpuOp& op = *next;  // the cache entry: nothing in this iteration fetches again
    switch (op.kind) {
      case OpKind::kCompute:
        s.computing = true;
        s.busy_ps += op.duration_ps;
        ctx.send(ctx.self(), op.duration_ps, kGpuComputeDone, GpuEvent{});
        break;
      case OpKind::kSend: {
        if (op.peer >= topo_.gpus())
          throw std::out_of_range("gpu program: send to GPU " + std::to_string(op.peer));
        TxEvent tx;
        tx.src_gpu = gpu;
        tx.dst_gpu = op.peer;
        tx.tag = op.tag;
        tx.msg_bytes = op.bytes;
        ctx.send(topo_.nic_lp(gpu), topo_.params().injection_latency_ps, kNicTx, tx);
        ++s.pending;
        s.bytes_sent += op.bytes;
        break;
      }
      case OpKind::kRecv:
        if (bump(s.balance, match_key(op.peer, op.tag), -1) < 0) ++s.unmatched;
        s.bytes_received += op.bytes;
        break;
      case OpKind::kWait:
        if (s.pending != 0 || s.unmatched != 0) return;
        break;
      case OpKind::kStorage: {
        if (op.peer >= topo_.params().storage_targets)
          throw std::out_of_range("gpu program: storage target " + std::to_string(op.peer));
        StorageEvent req;
        req.client_gpu = gpu;
        req.write = op.tag;
        req.bytes = op.bytes;
        ctx.send(topo_.storage_lp(op.peer), topo_.params().storage_latency_ps, kStorageRequest, req);
        ++s.pending;
        break;
      }
    }
    ++s.pc;
  }
}

void GpuLp::undo_op(State& s, const GpuOp& op) {
  switch (op.kind) {
    case OpKind::kCompute:
      s.busy_ps -= op.duration_ps;
      break;
    case OpKind::kSend:
      --s.pending;
      s.bytes_sent -= op.bytes;
      break;
    case OpKind::kRecv: {
      const std::uint64_t key = match_key(op.peer, op.tag);
      if (value_of(s.balance, key) < 0) --s.unmatched;
      bump(s.balance, key, +1);
      s.bytes_received -= op.bytes;
      break;
    }
    case OpKind::kWait:
      break;
    case OpKind::kStorage:
      --s.pending;
      break;
  }
}

void GpuLp::forward(std::uint32_t slot, LpContext& ctx) {
  State& s = mutable_state(slot);
  auto& e = ctx.payload<GpuEvent>();
  if (series_ != nullptr) series_->prefetch_gpu(slot);
  e.saved_pc = s.pc;
  e.saved_finish = s.finish_ps;
  e.saved_flags = static_cast<std::uint8_t>((s.computing ? kComputing : 0) | (s.done ? kDone : 0));
  switch (ctx.kind()) {
    case kGpuStart:
      break;
    case kGpuComputeDone:
      s.computing = false;
      break;
    case kGpuSendDone:
      --s.pending;
      break;
    case kGpuRecvArrived:
      ++s.messages_arrived;
      if (bump(s.balance, match_key(e.peer, e.tag), +1) <= 0) --s.unmatched;
      break;
    default:
      throw std::logic_error("gpu: unexpected event kind " + std::to_string(ctx.kind()));
  }
  const std::uint64_t sent_before = s.bytes_sent;
  advance(s, ctx);
  e.result_flags = static_cast<std::uint8_t>((s.computing ? kComputing : 0) | (s.done ? kDone : 0));
  e.ops_run = static_cast<std::uint32_t>(s.pc - e.saved_pc);
  e.sent_bytes = s.bytes_sent - sent_before;
  // The ops commit() will look up (both still in the op cache: advance() just fetched them).
  if (s.computing && e.ops_run != 0) {
    if (series_ != nullptr) note(slot, s.pc - 1, *fetch(s, s.pc - 1));
  } else if (!s.computing && !s.done) {
    note(slot, s.pc, *fetch(s, s.pc));
  }
}

void GpuLp::reverse(std::uint32_t slot, LpContext& ctx) {
  State& s = mutable_state(slot);
  const auto& e = ctx.payload<GpuEvent>();
  for (std::uint64_t i = s.pc; i > e.saved_pc; --i) undo_op(s, op_at(s, i - 1));
  s.pc = e.saved_pc;
  switch (ctx.kind()) {
    case kGpuSendDone:
      ++s.pending;
      break;
    case kGpuRecvArrived: {
      --s.messages_arrived;
      const std::uint64_t key = match_key(e.peer, e.tag);
      if (value_of(s.balance, key) <= 0) ++s.unmatched;
      bump(s.balance, key, -1);
      break;
    }
    default:
      break;
  }
  s.computing = (e.saved_flags & kComputing) != 0;
  s.done = (e.saved_flags & kDone) != 0;
  s.finish_ps = e.saved_finish;
}

void GpuLp::commit(std::uint32_t slot, LpContext& ctx) {
  const auto& e = ctx.payload<GpuEvent>();
  // Blocked time per wait label: an interval ends when the GPU leaves the Wait (or passes it and blocks on
  // the next one) and starts at the Wait the event left the GPU blocked on (the op at the new pc).
  const bool waiting = (e.result_flags & (kComputing | kDone)) == 0;
  WaitClock& clock = clocks_[slot];
  if (clock.open && (!waiting || e.ops_run != 0)) {
    clock.blocked_ps[clock.label] += ctx.now() - clock.since;
    clock.open = false;
  }
  if (waiting && !clock.open) {
    clock.open = true;
    clock.since = ctx.now();
    clock.label = noted(slot, e.saved_pc + e.ops_run).wait_label;
    if (clock.label >= kWaitLabels)
      throw std::logic_error("gpu program: wait label " + std::to_string(clock.label) + " is not below " +
                             std::to_string(kWaitLabels));
  }

  if (series_ == nullptr) return;
  // The ops this event ran start now. A compute op stops the loop, so one that started here is the last
  // op run; only it is fetched again (op lookups cost as much as the rest of the handler).
  SeriesRecorder& rec = series_->recorder();
  const SeriesRecorder::Component c{series_->gpu_kind(), slot};
  const SimTime now = ctx.now();
  const bool computing = e.ops_run != 0 && (e.result_flags & kComputing) != 0;
  const CommitNote op = computing ? noted(slot, e.saved_pc + e.ops_run - 1) : CommitNote{};
  const SimTime end = now + op.duration_ps;
  if (SeriesRecorder::SampleRecord r = rec.current_sample(c, now, end)) {  // the common case
    if (e.sent_bytes != 0) r.add(gpu_metric::kBytesSent, static_cast<double>(e.sent_bytes));
    if (computing) {
      r.add(gpu_metric::kBusy, static_cast<double>(op.duration_ps));
      if (op.flops != 0) r.add(gpu_metric::kFlops, op.flops);
      if (op.hbm_bytes != 0) r.add(gpu_metric::kHbmBytes, op.hbm_bytes);
    }
  } else {
    if (e.sent_bytes != 0) rec.add(c, gpu_metric::kBytesSent, now, static_cast<double>(e.sent_bytes));
    if (computing) {
      rec.add_spread(c, gpu_metric::kBusy, now, end, static_cast<double>(op.duration_ps));
      if (op.flops != 0) rec.add_spread(c, gpu_metric::kFlops, now, end, op.flops);
      if (op.hbm_bytes != 0) rec.add_spread(c, gpu_metric::kHbmBytes, now, end, op.hbm_bytes);
    }
  }
  if (waiting != ((e.saved_flags & (kComputing | kDone)) == 0) || e.ops_run != 0)
    rec.set(c, gpu_metric::kCommWait, now, waiting ? 1.0 : 0.0);
}

std::uint64_t GpuLp::digest(std::uint32_t slot) const {
  const State& s = state(slot);
  std::uint64_t h = murmur3_fmix64(s.id + 1);
  for (std::uint64_t v : {s.pc, std::uint64_t{s.pending}, std::uint64_t{s.unmatched},
                          std::uint64_t{s.computing} | std::uint64_t{s.done} << 1, s.finish_ps, s.busy_ps,
                          s.bytes_sent, s.bytes_received, s.messages_arrived}) {
    h = murmur3_fmix64(h ^ v);
  }
  for (const auto& [key, value] : s.balance)
    h = murmur3_fmix64(h ^ key ^ (static_cast<std::uint64_t>(value) << 7));
  return h;
}

}  // namespace warpsim::cluster
