// The echo LP test double (see echo_lp.hpp).
#include "tests/models/cluster/echo_lp.hpp"

#include "engine/hash.hpp"

namespace warpsim::testing {

namespace {
std::uint64_t key_hash(const EventKey& k) {
  return murmur3_fmix64(k.time ^ murmur3_fmix64(k.order ^ murmur3_fmix64(k.src)));
}
}  // namespace

void EchoLp::init(std::uint32_t, LpContext& ctx) {
  ctx.send(ctx.self(), params_.hop_delay, 0);
}

void EchoLp::forward(std::uint32_t slot, LpContext& ctx) {
  EchoState& s = mutable_state(slot);
  ++s.received;
  s.checksum += key_hash(ctx.event_key());
  const SimTime delay = params_.hop_delay + ctx.rng().below(params_.hop_delay);
  if (ctx.now() + delay < params_.end_time)
    ctx.send(static_cast<LpId>(ctx.rng().below(params_.lp_count)), delay, 0);
}

void EchoLp::reverse(std::uint32_t slot, LpContext& ctx) {
  EchoState& s = mutable_state(slot);
  --s.received;
  s.checksum -= key_hash(ctx.event_key());
}

std::uint64_t EchoLp::digest(std::uint32_t slot) const {
  const EchoState& s = state(slot);
  return murmur3_fmix64(murmur3_fmix64(s.id + 7) ^ s.received) ^ s.checksum;
}

}  // namespace warpsim::testing
