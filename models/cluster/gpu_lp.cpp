// GPU logical process (see gpu_lp.hpp).
#include "models/cluster/gpu_lp.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "models/cluster/cluster_events.hpp"

namespace warpsim::cluster {

namespace {
constexpr std::uint8_t kComputing = 1, kDone = 2, kEnded0 = 4, kEnded1 = 8, kContended = 16;

// Stream 0's keys are (peer << 32 | tag), as they were before there were two streams; stream 1's set bit 63
// (peer < 2^31: jobs have 32-bit ranks below 2^31).
std::uint64_t match_key(std::uint32_t stream, std::uint32_t peer, std::uint32_t tag) {
  return (std::uint64_t{stream} << 31 | peer) << 32 | tag;
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

std::uint8_t flags_of(const GpuState& s) {
  return static_cast<std::uint8_t>((s.computing ? kComputing : 0) | (s.done ? kDone : 0) |
                                   (s.streams[0].ended ? kEnded0 : 0) | (s.streams[1].ended ? kEnded1 : 0) |
                                   (s.contended ? kContended : 0));
}

// The stream an event kind addresses (send completions and arrivals come per stream).
std::uint32_t stream_of(std::uint16_t kind) {
  return kind == kGpuCommSendDone || kind == kGpuCommRecvArrived ? 1 : 0;
}
}  // namespace

GpuLp::State GpuLp::make_state(LpId id) {
  State s;
  s.id = id;
  s.gpu = topo_.gpu_of(id);
  return s;
}

// The per-slot side tables: the wait clocks, the op cache and the commit notes.
void GpuLp::on_added(std::uint32_t, LpId id) {
  if (series_ != nullptr) series_->add_gpu(id);  // component local index == slot
  clocks_.emplace_back();
  comm_clocks_.emplace_back();
  op_cache_.resize(op_cache_.size() + streams_ * kOpCacheWays);
  notes_.resize(notes_.size() + kCommitNotes);
  note_next_.push_back(0);
}

void GpuLp::init(std::uint32_t, LpContext& ctx) {
  ctx.send(ctx.self(), 0, kGpuStart, GpuEvent{});
}

const GpuOp* GpuLp::fetch(const State& s, std::uint32_t stream, std::uint64_t index) const {
  OpCache& c =
      op_cache_[(std::size_t{slot_of_state(s)} * streams_ + stream) * kOpCacheWays + (index % kOpCacheWays)];
  if (c.index != index) {
    const auto op = stream == 0 ? program_->op(s.gpu, index) : program_->comm_op(s.gpu, index);
    c.index = index;
    c.end = !op.has_value();
    if (op) c.op = *op;
  }
  return c.end ? nullptr : &c.op;
}

GpuOp GpuLp::op_at(const State& s, std::uint32_t stream, std::uint64_t index) const {
  const GpuOp* op = fetch(s, stream, index);
  if (op == nullptr)
    throw std::logic_error("gpu program: op " + std::to_string(index) + " of stream " +
                           std::to_string(stream) + " vanished on replay");
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
  return CommitNote::of(index, op_at(state(slot), 0, index));
}

bool GpuLp::completed(const State& s, std::uint32_t stream, std::uint64_t index) {
  const std::uint64_t pc = s.streams[stream].pc;
  // A compute op (stream 0 only) has run when its stream passed it and is not still computing it.
  return pc > index + 1 || (pc == index + 1 && !(stream == 0 && s.computing));
}

bool GpuLp::advance(State& s, LpContext& ctx, std::uint32_t stream) {
  const std::uint32_t gpu = s.gpu;
  GpuStream& st = s.streams[stream];
  bool moved = false;
  while (!st.ended && !(stream == 0 && s.computing)) {
    const GpuOp* next = fetch(s, stream, st.pc);
    if (next == nullptr) {
      st.ended = true;
      return true;
    }
    const GpuOp& op = *next;  // the cache entry: nothing in this iteration fetches again
    switch (op.kind) {
      case OpKind::kCompute: {
        if (stream != 0) throw std::logic_error("gpu program: a compute op on the communication stream");
        s.computing = true;
        // Stream 1's NCCL kernels hold SMs while its communication is in flight.
        s.contended = streams_ > 1 && (s.streams[1].pending != 0 || s.streams[1].unmatched != 0) &&
                      program_->comm_contends(s.gpu, s.streams[1].pc);
        const SimTime d = run_ps(s, op.duration_ps);
        s.busy_ps += d;
        ctx.send(ctx.self(), d, kGpuComputeDone, GpuEvent{});
        break;
      }
      case OpKind::kSend: {
        if (op.peer >= topo_.gpus())
          throw std::out_of_range("gpu program: send to GPU " + std::to_string(op.peer));
        TxEvent tx;
        tx.src_gpu = gpu;
        tx.dst_gpu = op.peer;
        tx.tag = op.tag;
        tx.stream = static_cast<std::uint8_t>(stream);
        tx.msg_bytes = op.bytes;
        ctx.send(topo_.nic_lp(gpu), topo_.params().injection_latency_ps, kNicTx, tx);
        ++st.pending;
        s.bytes_sent += op.bytes;
        break;
      }
      case OpKind::kRecv:
        if (bump(s.balance, match_key(stream, op.peer, op.tag), -1) < 0) ++st.unmatched;
        s.bytes_received += op.bytes;
        break;
      case OpKind::kWait:
        if (st.pending != 0 || st.unmatched != 0) return moved;
        break;
      case OpKind::kStorage: {
        if (stream != 0) throw std::logic_error("gpu program: a storage op on the communication stream");
        if (op.peer >= topo_.params().storage_targets)
          throw std::out_of_range("gpu program: storage target " + std::to_string(op.peer));
        StorageEvent req;
        req.client_gpu = gpu;
        req.write = op.tag;
        req.bytes = op.bytes;
        ctx.send(topo_.storage_lp(op.peer), topo_.params().storage_latency_ps, kStorageRequest, req);
        ++st.pending;
        break;
      }
      case OpKind::kDelay:  // completes as a send does, after its duration
        ctx.send(ctx.self(), op.duration_ps, send_done_kind(static_cast<std::uint8_t>(stream)), GpuEvent{});
        ++st.pending;
        break;
      case OpKind::kWaitStream:
        if (streams_ < 2) throw std::logic_error("gpu program: kWaitStream in a one-stream program");
        if (!completed(s, 1 - stream, op.bytes)) return moved;
        break;
    }
    ++st.pc;
    moved = true;
  }
  return moved;
}

void GpuLp::run(State& s, LpContext& ctx) {
  if (streams_ == 1) {
    advance(s, ctx, 0);
  } else {
    // Each pass that moves a stream may unblock the other one; kWaitStream's targets only grow, so this ends.
    // Stream 1 goes first: a collective whose inputs just became ready is launched before the next compute
    // kernel, which then shares the SMs with it.
    bool moved = true;
    while (moved) {
      moved = advance(s, ctx, 1);
      moved = advance(s, ctx, 0) || moved;
    }
  }
  if (!s.done && s.streams[0].ended && (streams_ == 1 || s.streams[1].ended)) {
    s.done = true;
    s.finish_ps = ctx.now();
  }
}

void GpuLp::undo_op(State& s, std::uint32_t stream, const GpuOp& op) {
  GpuStream& st = s.streams[stream];
  switch (op.kind) {
    case OpKind::kCompute:  // the compute op an event started is the running one: s.contended is its own
      s.busy_ps -= run_ps(s, op.duration_ps);
      break;
    case OpKind::kSend:
      --st.pending;
      s.bytes_sent -= op.bytes;
      break;
    case OpKind::kRecv: {
      const std::uint64_t key = match_key(stream, op.peer, op.tag);
      if (value_of(s.balance, key) < 0) --st.unmatched;
      bump(s.balance, key, +1);
      s.bytes_received -= op.bytes;
      break;
    }
    case OpKind::kWait:
    case OpKind::kWaitStream:
      break;
    case OpKind::kStorage:
    case OpKind::kDelay:
      --st.pending;
      break;
  }
}

void GpuLp::forward(std::uint32_t slot, LpContext& ctx) {
  State& s = mutable_state(slot);
  auto& e = ctx.payload<GpuEvent>();
  if (series_ != nullptr) series_->prefetch_gpu(slot);
  e.saved_pc = s.streams[0].pc;
  e.saved_comm_pc = s.streams[1].pc;
  e.saved_flags = flags_of(s);
  const std::uint32_t stream = stream_of(ctx.kind());
  GpuStream& st = s.streams[stream];
  switch (ctx.kind()) {
    case kGpuStart:
      break;
    case kGpuComputeDone:
      s.computing = false;
      break;
    case kGpuSendDone:
    case kGpuCommSendDone:
      --st.pending;
      break;
    case kGpuRecvArrived:
    case kGpuCommRecvArrived:
      ++s.messages_arrived;
      if (bump(s.balance, match_key(stream, e.peer, e.tag), +1) <= 0) --st.unmatched;
      break;
    default:
      throw std::logic_error("gpu: unexpected event kind " + std::to_string(ctx.kind()));
  }
  const std::uint64_t sent_before = s.bytes_sent;
  run(s, ctx);
  e.result_flags = flags_of(s);
  e.ops_run = static_cast<std::uint32_t>(s.streams[0].pc - e.saved_pc);
  const std::uint64_t comm_ops = s.streams[1].pc - e.saved_comm_pc;
  if (comm_ops > 0xffff)  // GpuEvent::comm_ops_run; a Wait between collectives keeps this small
    throw std::logic_error("gpu program: more than 65535 communication-stream ops in one event");
  e.comm_ops_run = static_cast<std::uint16_t>(comm_ops);
  e.sent_bytes = s.bytes_sent - sent_before;
  // The ops commit() will look up (both still in the op cache: run() just fetched them).
  if (s.computing && e.ops_run != 0) {
    if (series_ != nullptr) note(slot, s.streams[0].pc - 1, *fetch(s, 0, s.streams[0].pc - 1));
  } else if (!s.computing && !s.streams[0].ended) {
    note(slot, s.streams[0].pc, *fetch(s, 0, s.streams[0].pc));
  }
}

void GpuLp::reverse(std::uint32_t slot, LpContext& ctx) {
  State& s = mutable_state(slot);
  const auto& e = ctx.payload<GpuEvent>();
  for (std::uint64_t i = s.streams[0].pc; i > e.saved_pc; --i) undo_op(s, 0, op_at(s, 0, i - 1));
  s.streams[0].pc = e.saved_pc;
  if (streams_ > 1) {
    for (std::uint64_t i = s.streams[1].pc; i > e.saved_comm_pc; --i) undo_op(s, 1, op_at(s, 1, i - 1));
    s.streams[1].pc = e.saved_comm_pc;
  }
  const std::uint32_t stream = stream_of(ctx.kind());
  GpuStream& st = s.streams[stream];
  switch (ctx.kind()) {
    case kGpuSendDone:
    case kGpuCommSendDone:
      ++st.pending;
      break;
    case kGpuRecvArrived:
    case kGpuCommRecvArrived: {
      --s.messages_arrived;
      const std::uint64_t key = match_key(stream, e.peer, e.tag);
      if (value_of(s.balance, key) <= 0) ++st.unmatched;
      bump(s.balance, key, -1);
      break;
    }
    default:
      break;
  }
  s.computing = (e.saved_flags & kComputing) != 0;
  s.contended = (e.saved_flags & kContended) != 0;
  s.done = (e.saved_flags & kDone) != 0;
  s.streams[0].ended = (e.saved_flags & kEnded0) != 0;
  s.streams[1].ended = (e.saved_flags & kEnded1) != 0;
  // finish_ps is set once, when the program ends, and is 0 before.
  if (!s.done) s.finish_ps = 0;
}

// Stream 1's clock: open while the stream is blocked on a Wait (its communication in flight).
void GpuLp::commit_comm_clock(std::uint32_t slot, LpContext& ctx) {
  const auto& e = ctx.payload<GpuEvent>();
  WaitClock& clock = comm_clocks_[slot];
  const bool ended = (e.result_flags & kEnded1) != 0;
  if (clock.open && (e.comm_ops_run != 0 || ended)) {
    clock.blocked_ps[clock.label] += ctx.now() - clock.since;
    clock.open = false;
  }
  if (ended || clock.open) return;
  const GpuOp* op = fetch(state(slot), 1, e.saved_comm_pc + e.comm_ops_run);
  if (op == nullptr || op->kind != OpKind::kWait) return;
  if (op->wait_label >= kWaitLabels)
    throw std::logic_error("gpu program: wait label " + std::to_string(op->wait_label) + " is not below " +
                           std::to_string(kWaitLabels));
  clock.open = true;
  clock.since = ctx.now();
  clock.label = op->wait_label;
}

void GpuLp::commit(std::uint32_t slot, LpContext& ctx) {
  const auto& e = ctx.payload<GpuEvent>();
  if (streams_ > 1) commit_comm_clock(slot, ctx);
  // Blocked time per wait label: an interval ends when the GPU leaves the Wait (or passes it and blocks on
  // the next one) and starts at the Wait the event left the GPU blocked on (the op at the new pc).
  const bool waiting = (e.result_flags & (kComputing | kEnded0)) == 0;
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
  CommitNote op = computing ? noted(slot, e.saved_pc + e.ops_run - 1) : CommitNote{};
  if (computing && (e.result_flags & kContended) != 0)
    op.duration_ps = program_->contended_ps(state(slot).gpu, op.duration_ps);
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
  if (waiting != ((e.saved_flags & (kComputing | kEnded0)) == 0) || e.ops_run != 0)
    rec.set(c, gpu_metric::kCommWait, now, waiting ? 1.0 : 0.0);
}

std::uint64_t GpuLp::digest(std::uint32_t slot) const {
  const State& s = state(slot);
  std::uint64_t h = murmur3_fmix64(s.id + 1);
  const GpuStream& s0 = s.streams[0];
  for (std::uint64_t v : {s0.pc, std::uint64_t{s0.pending}, std::uint64_t{s0.unmatched},
                          std::uint64_t{s.computing} | std::uint64_t{s.done} << 1, s.finish_ps, s.busy_ps,
                          s.bytes_sent, s.bytes_received, s.messages_arrived}) {
    h = murmur3_fmix64(h ^ v);
  }
  for (const auto& [key, value] : s.balance)
    h = murmur3_fmix64(h ^ key ^ (static_cast<std::uint64_t>(value) << 7));
  // Stream 1 enters only for programs that have one, so one-stream digests are what they always were.
  if (streams_ > 1) {
    const GpuStream& s1 = s.streams[1];
    for (std::uint64_t v :
         {s1.pc, std::uint64_t{s1.pending}, std::uint64_t{s1.unmatched},
          std::uint64_t{s0.ended} | std::uint64_t{s1.ended} << 1 | std::uint64_t{s.contended} << 2})
      h = murmur3_fmix64(h ^ v);
  }
  return h;
}

}  // namespace warpsim::cluster
