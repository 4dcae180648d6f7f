// Checkpoint save/load of the cluster LP types' states (docs/checkpoint.md). Each writes its State field by
// field (no struct padding in the file) and load() refuses a record of another LP. Kept in one file so the
// hardware models' handlers stay free of serialization code.
#include <array>
#include <cstdint>
#include <istream>
#include <ostream>
#include <string>

#include "engine/checkpoint_io.hpp"
#include "models/cluster/flow_network.hpp"
#include "models/cluster/flow_nic_lp.hpp"
#include "models/cluster/gpu_lp.hpp"
#include "models/cluster/nic_lp.hpp"
#include "models/cluster/storage_lp.hpp"
#include "models/cluster/switch_lp.hpp"

namespace warpsim::cluster {

namespace {

using ckpt::get;
using ckpt::put;

constexpr std::uint64_t kMaxEntries = std::uint64_t{1} << 32;

}  // namespace

void GpuLp::save(std::uint32_t slot, std::ostream& out) const {
  const State& s = state(slot);
  put(out, s.id);
  put(out, s.gpu);
  for (const GpuStream& st : s.streams) {
    put(out, st.pc);
    put(out, st.pending);
    put(out, st.unmatched);
    put<std::uint8_t>(out, st.ended);
  }
  put<std::uint8_t>(out, s.computing);
  put<std::uint8_t>(out, s.contended);
  put<std::uint8_t>(out, s.done);
  put(out, s.finish_ps);
  put(out, s.busy_ps);
  put(out, s.bytes_sent);
  put(out, s.bytes_received);
  put(out, s.messages_arrived);
  put<std::uint64_t>(out, s.balance.size());
  for (const auto& [key, count] : s.balance) {
    put(out, key);
    put(out, count);
  }
  for (const WaitClock* c : {&clocks_[slot], &comm_clocks_[slot]}) {
    put(out, c->since);
    put(out, c->label);
    put<std::uint8_t>(out, c->open);
    for (SimTime t : c->blocked_ps) put(out, t);
  }
}

void GpuLp::load(std::uint32_t slot, std::istream& in) {
  State s;
  expect_id(in, slot);
  s.id = state(slot).id;
  s.gpu = get<std::uint32_t>(in);
  if (s.gpu != state(slot).gpu) throw CheckpointError("checkpoint data is malformed: GPU index differs");
  for (GpuStream& st : s.streams) {
    st.pc = get<std::uint64_t>(in);
    st.pending = get<std::uint32_t>(in);
    st.unmatched = get<std::uint32_t>(in);
    st.ended = get<std::uint8_t>(in) != 0;
  }
  s.computing = get<std::uint8_t>(in) != 0;
  s.contended = get<std::uint8_t>(in) != 0;
  s.done = get<std::uint8_t>(in) != 0;
  s.finish_ps = get<SimTime>(in);
  s.busy_ps = get<SimTime>(in);
  s.bytes_sent = get<std::uint64_t>(in);
  s.bytes_received = get<std::uint64_t>(in);
  s.messages_arrived = get<std::uint64_t>(in);
  const std::uint64_t n = ckpt::get_count(in, kMaxEntries, "GPU receive balance");
  for (std::uint64_t i = 0; i < n; ++i) {
    const auto key = get<std::uint64_t>(in);
    s.balance.emplace_hint(s.balance.end(), key, get<std::int32_t>(in));
  }
  std::array<WaitClock, 2> c;
  for (WaitClock& w : c) {
    w.since = get<SimTime>(in);
    w.label = get<std::uint8_t>(in);
    if (w.label >= kWaitLabels)
      throw CheckpointError("checkpoint data is malformed: GPU wait label out of range");
    w.open = get<std::uint8_t>(in) != 0;
    for (SimTime& t : w.blocked_ps) t = get<SimTime>(in);
  }
  mutable_state(slot) = std::move(s);
  clocks_[slot] = c[0];
  comm_clocks_[slot] = c[1];
}

void NicLp::save(std::uint32_t slot, std::ostream& out) const {
  const State& s = state(slot);
  put(out, s.id);
  put(out, s.busy_until);
  for (std::uint64_t v : {s.bytes_tx, s.bytes_rx, s.packets_tx, s.packets_rx, s.messages_tx, s.messages_rx})
    put(out, v);
  put(out, s.busy_ps);
}

void NicLp::load(std::uint32_t slot, std::istream& in) {
  State& s = mutable_state(slot);
  expect_id(in, slot);
  State t = s;
  t.busy_until = get<decltype(t.busy_until)>(in);
  for (std::uint64_t* v :
       {&t.bytes_tx, &t.bytes_rx, &t.packets_tx, &t.packets_rx, &t.messages_tx, &t.messages_rx})
    *v = get<std::uint64_t>(in);
  t.busy_ps = get<SimTime>(in);
  s = t;
}

void SwitchLp::save(std::uint32_t slot, std::ostream& out) const {
  const State& s = state(slot);
  put(out, s.id);
  put(out, s.packets);
  put(out, s.overflows);
  put<std::uint64_t>(out, s.ports.size());
  for (const Port& p : s.ports) {
    put(out, p.busy_until);
    put(out, p.bytes_tx);
    put(out, p.max_depth_bytes);
    put(out, p.busy_ps);
  }
}

void SwitchLp::load(std::uint32_t slot, std::istream& in) {
  State& s = mutable_state(slot);
  expect_id(in, slot);
  State t = s;
  t.packets = get<std::uint64_t>(in);
  t.overflows = get<std::uint64_t>(in);
  if (get<std::uint64_t>(in) != t.ports.size())
    throw CheckpointError("checkpoint data is malformed: switch LP " + std::to_string(s.id) +
                          " port count differs");
  for (Port& p : t.ports) {
    p.busy_until = get<SimTime>(in);
    p.bytes_tx = get<std::uint64_t>(in);
    p.max_depth_bytes = get<std::uint64_t>(in);
    p.busy_ps = get<SimTime>(in);
  }
  s = std::move(t);
}

void StorageLp::save(std::uint32_t slot, std::ostream& out) const {
  const State& s = state(slot);
  put(out, s.id);
  for (std::uint64_t v : {s.busy_until, s.requests, s.bytes_read, s.bytes_written, s.busy_ps}) put(out, v);
}

void StorageLp::load(std::uint32_t slot, std::istream& in) {
  State& s = mutable_state(slot);
  expect_id(in, slot);
  State t = s;
  for (std::uint64_t* v : {&t.busy_until, &t.requests, &t.bytes_read, &t.bytes_written, &t.busy_ps})
    *v = get<std::uint64_t>(in);
  s = t;
}

void FlowNicLp::save(std::uint32_t slot, std::ostream& out) const {
  const State& s = state(slot);
  put(out, s.id);
  put(out, s.messages_tx);
  put(out, s.bytes_tx);
}

void FlowNicLp::load(std::uint32_t slot, std::istream& in) {
  State& s = mutable_state(slot);
  expect_id(in, slot);
  const auto messages = get<std::uint64_t>(in);
  s.bytes_tx = get<std::uint64_t>(in);
  s.messages_tx = messages;
}

void FlowNetworkLp::save(std::uint32_t slot, std::ostream& out) const {
  const State& s = state(slot);
  // At a cut every event is committed, and commit() drops each event's undo record.
  if (!s.undo.empty()) throw std::logic_error("flow network saved with uncommitted events");
  put(out, s.id);
  const Stats& st = s.stats;
  for (std::uint64_t v : {st.flows_started, st.flows_completed, st.bytes_completed, st.reallocations,
                          st.schedules, st.stale, st.peak_active})
    put(out, v);
  put<std::uint64_t>(out, s.flows.size());
  for (const auto& [id, f] : s.flows) {
    put(out, id.src);
    put(out, id.order);
    for (std::uint32_t v : {f.src_gpu, f.dst_gpu, f.tag, f.version}) put(out, v);
    put(out, f.remaining_bytes);
    put(out, f.rate);
    put(out, f.updated_ps);
    put(out, f.tail_latency_ps);
    put(out, f.bytes);
    put(out, f.hops);
    put(out, f.stream);
    for (std::uint32_t h = 0; h < f.hops; ++h) put(out, f.path[h]);
  }
}

void FlowNetworkLp::load(std::uint32_t slot, std::istream& in) {
  State& s = mutable_state(slot);
  expect_id(in, slot);
  State t;
  t.id = s.id;
  Stats& st = t.stats;
  for (std::uint64_t* v : {&st.flows_started, &st.flows_completed, &st.bytes_completed, &st.reallocations,
                           &st.schedules, &st.stale, &st.peak_active})
    *v = get<std::uint64_t>(in);
  const std::uint64_t n = ckpt::get_count(in, kMaxEntries, "flow");
  for (std::uint64_t i = 0; i < n; ++i) {
    FlowId id;
    id.src = get<std::uint64_t>(in);
    id.order = get<std::uint64_t>(in);
    Flow f;
    for (std::uint32_t* v : {&f.src_gpu, &f.dst_gpu, &f.tag, &f.version}) *v = get<std::uint32_t>(in);
    f.remaining_bytes = get<double>(in);
    f.rate = get<double>(in);
    f.updated_ps = get<SimTime>(in);
    f.tail_latency_ps = get<SimTime>(in);
    f.bytes = get<std::uint64_t>(in);
    f.hops = get<std::uint32_t>(in);
    f.stream = get<std::uint8_t>(in);
    if (f.stream > 1) throw CheckpointError("checkpoint data is malformed: flow stream out of range");
    if (f.hops > kMaxHops)
      throw CheckpointError("checkpoint data is malformed: flow path longer than kMaxHops");
    for (std::uint32_t h = 0; h < f.hops; ++h) f.path[h] = get<LinkKey>(in);
    // The link index is derived state: rebuilt exactly as start() builds it (its lists point at the node).
    attach(t, id, t.flows.emplace_hint(t.flows.end(), id, f)->second);
  }
  s = std::move(t);
}

}  // namespace warpsim::cluster
