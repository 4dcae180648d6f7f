// NIC logical process of the flow fidelity (see flow_nic_lp.hpp).
#include "models/cluster/flow_nic_lp.hpp"

#include <stdexcept>
#include <string>

#include "models/cluster/cluster_events.hpp"

namespace warpsim::cluster {

void FlowNicLp::forward(std::uint32_t slot, LpContext& ctx) {
  if (ctx.kind() != kNicTx)
    throw std::logic_error("flow nic: unexpected event kind " + std::to_string(ctx.kind()));
  State& s = mutable_state(slot);
  const auto& tx = ctx.payload<TxEvent>();
  const PortPeer first = topo_.peer(s.id, topo_.route(s.id, tx.src_gpu, tx.dst_gpu, 0));
  FlowStart m;
  m.src_gpu = tx.src_gpu;
  m.dst_gpu = tx.dst_gpu;
  m.tag = tx.tag;
  m.stream = tx.stream;
  m.bytes = tx.msg_bytes;
  ctx.send(topo_.flow_network_lp(), first.link.latency_ps, kFlowStart, m);
  ++s.messages_tx;
  s.bytes_tx += tx.msg_bytes;
}

void FlowNicLp::reverse(std::uint32_t slot, LpContext& ctx) {
  State& s = mutable_state(slot);
  --s.messages_tx;
  s.bytes_tx -= ctx.payload<TxEvent>().msg_bytes;
}

std::uint64_t FlowNicLp::digest(std::uint32_t slot) const {
  const State& s = state(slot);
  return murmur3_fmix64(murmur3_fmix64(murmur3_fmix64(s.id + 31) ^ s.messages_tx) ^ s.bytes_tx);
}

}  // namespace warpsim::cluster
