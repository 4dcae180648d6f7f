// Tricky test LP implementation (see tricky_model.hpp).
#include "tests/engine/kernel/tricky_model.hpp"

#include <algorithm>

namespace warpsim::testing {

namespace {
constexpr std::uint64_t kInverseOf3 = 0xAAAAAAAAAAAAAAABull;  // 3 * this == 1 (mod 2^64)
static_assert(3 * kInverseOf3 == 1);

std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 31;
  x *= 0x7fb5d329728ea185ull;
  x ^= x >> 27;
  x *= 0x81dadef4bc2dd44dull;
  return x ^ (x >> 33);
}
}  // namespace

std::uint32_t TrickyLp::add_lp(LpId) {
  states_.emplace_back();
  return static_cast<std::uint32_t>(states_.size() - 1);
}

void TrickyLp::init(std::uint32_t, LpContext& ctx) {
  for (int i = 0; i < 2; ++i) {
    Payload p{ctx.rng().next_u64(), 0, 0, 0};
    ctx.send(static_cast<LpId>(ctx.rng().below(params_.lp_count)), params_.quantum * (1 + ctx.rng().below(3)),
             kWork, p);
  }
}

void TrickyLp::forward(std::uint32_t slot, LpContext& ctx) {
  State& s = states_[slot];
  Payload& p = ctx.payload<Payload>();
  if (ctx.kind() == kEcho) {
    ++s.echoes;
    s.acc ^= p.value;
    if (p.hops < 4 && ctx.rng().below(2) == 0)
      ctx.send(ctx.self(), 0, kEcho, Payload{ctx.rng().next_u64(), 0, p.hops + 1, 0});
    return;
  }
  ++s.handled;
  s.acc = s.acc * 3 + p.value;
  p.saved_max = s.max_seen;
  s.max_seen = std::max(s.max_seen, p.value ^ s.acc);
  if (p.value % 2 == 0) s.history.push_back(s.acc ^ p.value);

  // Exactly one Work successor keeps the population constant; delays are quantized to force time ties.
  const auto dst = static_cast<LpId>(ctx.rng().below(params_.lp_count));
  SimTime delay = params_.quantum * (1 + ctx.rng().below(3));
  if (params_.zero_delay_remote && p.hops < 3 && ctx.rng().below(4) == 0) delay = 0;
  ctx.send(dst, delay, kWork, Payload{ctx.rng().next_u64(), 0, delay == 0 ? p.hops + 1 : 0, 0});
  // Zero to two zero-delay echoes to self: a variable number of sends, ordered by generation.
  const auto echoes = ctx.rng().below(3);
  for (std::uint64_t i = 0; i < echoes; ++i)
    ctx.send(ctx.self(), 0, kEcho, Payload{ctx.rng().next_u64(), 0, 0, 0});
}

void TrickyLp::reverse(std::uint32_t slot, LpContext& ctx) {
  State& s = states_[slot];
  const Payload& p = ctx.payload<Payload>();
  if (ctx.kind() == kEcho) {
    s.acc ^= p.value;
    --s.echoes;
    return;
  }
  if (p.value % 2 == 0) s.history.pop_back();
  s.max_seen = p.saved_max;
  s.acc = (s.acc - p.value) * kInverseOf3;
  --s.handled;
}

void TrickyLp::commit(std::uint32_t slot, LpContext& ctx) {
  State& s = states_[slot];
  const EventKey k = ctx.event_key();
  s.commit_chain = mix(s.commit_chain ^ mix(k.time ^ mix(k.order ^ k.src)));
  ++s.commits;
}

std::uint64_t TrickyLp::digest(std::uint32_t slot) const {
  const State& s = states_[slot];
  std::uint64_t h =
      mix(s.acc) ^ mix(s.max_seen + 1) ^ mix(s.handled + 2) ^ mix(s.echoes + 3) ^ mix(s.commits + 4);
  h = mix(h ^ s.commit_chain);
  for (std::uint64_t v : s.history) h = mix(h ^ v);
  return h;
}

void TrickyLp::save(std::uint32_t slot, std::ostream& out) const {
  const State& s = states_[slot];
  for (std::uint64_t v : {s.acc, s.max_seen, s.handled, s.echoes, s.commit_chain, s.commits}) ckpt::put(out, v);
  ckpt::put<std::uint64_t>(out, s.history.size());
  for (std::uint64_t v : s.history) ckpt::put(out, v);
}

void TrickyLp::load(std::uint32_t slot, std::istream& in) {
  State s;
  for (std::uint64_t* v : {&s.acc, &s.max_seen, &s.handled, &s.echoes, &s.commit_chain, &s.commits})
    *v = ckpt::get<std::uint64_t>(in);
  s.history.resize(ckpt::get_count(in, std::uint64_t{1} << 32, "tricky history"));
  for (std::uint64_t& v : s.history) v = ckpt::get<std::uint64_t>(in);
  states_[slot] = std::move(s);
}

}  // namespace warpsim::testing
