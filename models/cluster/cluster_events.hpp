// Event kinds and payloads of the cluster model. Payloads are small, trivially copyable, and carry the
// fields their reverse handlers need (saved_*), written by forward into the handled event itself.
#pragma once

#include <algorithm>
#include <cstdint>

#include "engine/hash.hpp"
#include "engine/sim_time.hpp"

namespace warpsim::cluster {

enum EventKind : std::uint16_t {
  kGpuStart = 1,        // self, at time 0: start the program
  kGpuComputeDone = 2,  // self: the running compute op finished
  kGpuSendDone = 3,     // from the NIC (or storage): a posted send / storage request completed
  kGpuRecvArrived = 4,  // from the NIC: the last packet of message (peer, tag) arrived
  kNicTx = 5,           // to a NIC: transmit the next packet of a message (from the GPU, then self)
  kPacket = 6,          // to a switch or the destination NIC: a packet fully received (store-and-forward)
  kStorageRequest = 7,  // to a storage target
  kFlowStart = 8,       // flow fidelity, NIC -> flow network: a message starts
  kFlowDone = 9,  // flow fidelity, flow network -> self: a flow's bytes are out (if its version matches)
  // kGpuSendDone / kGpuRecvArrived of a message of the GPU's communication stream (stream 1).
  kGpuCommSendDone = 10,
  kGpuCommRecvArrived = 11,
};

// The GPU event kinds that tell a stream's send completed / message arrived.
inline EventKind send_done_kind(std::uint8_t stream) {
  return stream == 0 ? kGpuSendDone : kGpuCommSendDone;
}
inline EventKind recv_arrived_kind(std::uint8_t stream) {
  return stream == 0 ? kGpuRecvArrived : kGpuCommRecvArrived;
}

struct GpuEvent {
  std::uint32_t peer = 0;
  std::uint32_t tag = 0;
  std::uint64_t saved_pc = 0;       // stream 0
  std::uint64_t saved_comm_pc = 0;  // stream 1
  std::uint8_t saved_flags = 0;
  // Written by forward for commit (the time series): the flags after the event, the ops each stream ran and
  // the message bytes they posted.
  std::uint8_t result_flags = 0;
  std::uint16_t comm_ops_run = 0;
  std::uint32_t ops_run = 0;
  std::uint64_t sent_bytes = 0;
};

struct TxEvent {
  std::uint32_t src_gpu = 0;
  std::uint32_t dst_gpu = 0;
  std::uint32_t tag = 0;
  std::uint16_t port = 0;   // written by forward for commit: the egress port the packet left by
  std::uint8_t stream = 0;  // the sending (and receiving) GPU stream
  std::uint8_t pad = 0;
  std::uint64_t msg_bytes = 0;
  std::uint64_t offset = 0;  // bytes of the message already sent
  SimTime saved_busy = 0;
};

struct Packet {
  std::uint32_t src_gpu = 0;
  std::uint32_t dst_gpu = 0;
  std::uint32_t tag = 0;
  std::uint32_t bytes = 0;
  std::uint8_t last = 0;    // 1 on the message's final packet (packets of a flow stay in order)
  std::uint8_t stream = 0;  // the GPU stream the message belongs to (the peer posts it on the same one)
  // Written by a switch's forward for its commit (the time series): the output port it queued the packet on.
  std::uint16_t saved_port = 0;
  // Serialization time of the packet on the link it arrived by (saturated): a cut-through switch started
  // receiving it that long before the event's time (the tail's arrival).
  std::uint32_t in_ser_ps = 0;
  SimTime saved_busy = 0;
  std::uint64_t saved_max_depth = 0;
};

struct StorageEvent {
  std::uint32_t client_gpu = 0;
  std::uint32_t write = 0;
  std::uint64_t bytes = 0;
  SimTime saved_busy = 0;
};

// Flow fidelity: a message handed from the source NIC to the flow network.
struct FlowStart {
  std::uint32_t src_gpu = 0;
  std::uint32_t dst_gpu = 0;
  std::uint32_t tag = 0;
  std::uint8_t stream = 0;  // the GPU stream the message belongs to
  std::uint8_t pad[3] = {};
  std::uint64_t bytes = 0;
};

// Identity of a flow: the key (sender LP, sender order) of its kFlowStart event, unique in the run and the
// same in every sync mode and partition, so flows sort identically everywhere.
struct FlowId {
  std::uint64_t src = 0;
  std::uint64_t order = 0;
  friend auto operator<=>(const FlowId&, const FlowId&) = default;
};

struct FlowDone {
  FlowId flow;
  std::uint32_t version = 0;  // the flow's rate version this completion was computed for
  std::uint32_t pad = 0;
};

inline constexpr std::size_t kMaxPayloadBytes = 40;
static_assert(sizeof(GpuEvent) <= kMaxPayloadBytes && sizeof(TxEvent) <= kMaxPayloadBytes &&
              sizeof(Packet) <= kMaxPayloadBytes && sizeof(StorageEvent) <= kMaxPayloadBytes &&
              sizeof(FlowStart) <= kMaxPayloadBytes && sizeof(FlowDone) <= kMaxPayloadBytes);

// Serialization time of `bytes` on a link of `gbps` (10^9 bit/s), in picoseconds, rounded up.
inline SimTime serialization_ps(std::uint64_t bytes, double gbps) {
  const double ps = static_cast<double>(bytes) * 8000.0 / gbps;
  const auto whole = static_cast<SimTime>(ps);
  return static_cast<double>(whole) < ps ? whole + 1 : whole;
}
// A serialization time as Packet::in_ser_ps (saturated at 4.29 ms; cut-through never saves more).
inline std::uint32_t saturated_ps(SimTime ps) {
  return static_cast<std::uint32_t>(std::min<SimTime>(ps, 0xffffffffu));
}
// Bytes a link of `gbps` transmits in `ps` picoseconds, rounded down (queue depth from a busy horizon).
inline std::uint64_t bytes_in(SimTime ps, double gbps) {
  return static_cast<std::uint64_t>(static_cast<double>(ps) * gbps / 8000.0);
}

// ECMP hash of a flow: every packet of a message takes the same path, so packets stay in order.
inline std::uint64_t flow_hash(std::uint32_t src, std::uint32_t dst, std::uint32_t tag) {
  return murmur3_fmix64((std::uint64_t{src} << 32 | dst) ^ murmur3_fmix64(tag + 0x9e3779b97f4a7c15ull));
}

}  // namespace warpsim::cluster
