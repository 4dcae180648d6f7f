// Failure-domain LP of the resilience model (see failure_domain_lp.hpp).
#include "models/reliability/failure_domain_lp.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "engine/hash.hpp"

namespace warpsim::reliability {

FailureDomainLp::FailureDomainLp(const ResilienceParams& params, LpId first_domain_lp, LpId job_lp)
    : job_lp_(job_lp),
      horizon_(to_ps(params.horizon_s)),
      repeat_probability_(params.repeat_probability),
      repeat_window_s_(params.repeat_window_s) {
  LpId next = first_domain_lp;
  for (const DomainGroup& d : params.groups) {
    Group g;
    g.first_lp = next;
    g.domains = d.domains;
    g.classes = d.classes;
    for (const FailureClass& c : d.classes) {
      if (!(c.mtbf_s > 0) || c.per_domain == 0) throw std::invalid_argument("failure class without a rate");
      g.rates.push_back(c.per_domain / c.mtbf_s);
      g.rate += g.rates.back();
    }
    g.repeats = d.repeats;
    next += d.domains;
    groups_.push_back(std::move(g));
  }
}

const FailureDomainLp::Group& FailureDomainLp::group_of(LpId lp) const {
  for (const Group& g : groups_)
    if (lp >= g.first_lp && lp - g.first_lp < g.domains) return g;
  throw std::logic_error("failure domain: LP " + std::to_string(lp) + " is in no group");
}

void FailureDomainLp::schedule_next(const Group& g, LpContext& ctx) const {
  if (g.rate <= 0) return;
  const SimTime delay = std::max<SimTime>(1, to_ps(ctx.rng().exponential(1 / g.rate)));
  // Events at or after the horizon would never run: not sending them keeps the pending set small (and
  // the sum below from wrapping).
  if (delay < horizon_ - ctx.now()) ctx.send(ctx.self(), delay, kNextFailure);
}

void FailureDomainLp::report(const Group& g, Component component, std::uint64_t index, bool repeat,
                             LpContext& ctx) const {
  ResiliencePayload failure;
  failure.component = static_cast<std::uint8_t>(component);
  failure.repeat = repeat ? 1 : 0;
  failure.domain = ctx.self();
  failure.index = index;
  failure.failed_at = ctx.now();
  ctx.send(job_lp_, kDetectionDelay, kFailure, failure);
  if (!g.repeats || repeat_probability_ <= 0) return;
  // Both draws are taken whatever the outcome, so the stream's use does not depend on it.
  const bool again = ctx.rng().uniform() <= repeat_probability_;
  const SimTime delay = std::max<SimTime>(1, to_ps(ctx.rng().uniform() * repeat_window_s_));
  if (again && delay < horizon_ - ctx.now()) {
    ResiliencePayload next;
    next.component = failure.component;
    next.index = index;
    ctx.send(ctx.self(), delay, kRepeatFailure, next);
  }
}

void FailureDomainLp::init(std::uint32_t, LpContext& ctx) {
  schedule_next(group_of(ctx.self()), ctx);
}

void FailureDomainLp::forward(std::uint32_t slot, LpContext& ctx) {
  FailureDomainState& s = mutable_state(slot);
  const Group& g = group_of(ctx.self());
  const std::uint64_t domain = ctx.self() - g.first_lp;
  if (ctx.kind() == kRepeatFailure) {
    const auto& p = ctx.payload<ResiliencePayload>();
    ++s.failures;
    ++s.repeats;
    report(g, static_cast<Component>(p.component), p.index, true, ctx);
    return;
  }
  // kNextFailure: which component failed, in proportion to the classes' rates, then which of its kind.
  double u = ctx.rng().uniform() * g.rate;
  std::size_t c = 0;
  while (c + 1 < g.classes.size() && u > g.rates[c]) u -= g.rates[c++];
  const FailureClass& cls = g.classes[c];
  const std::uint64_t index = domain * cls.per_domain + ctx.rng().below(cls.per_domain);
  ++s.failures;
  report(g, cls.component, index, false, ctx);
  schedule_next(g, ctx);
}

void FailureDomainLp::reverse(std::uint32_t slot, LpContext& ctx) {
  FailureDomainState& s = mutable_state(slot);
  --s.failures;
  if (ctx.kind() == kRepeatFailure) --s.repeats;
}

std::uint64_t FailureDomainLp::digest(std::uint32_t slot) const {
  const FailureDomainState& s = state(slot);
  return splitmix64_finalize(id_of(slot) ^ splitmix64_finalize(s.failures ^ splitmix64_finalize(s.repeats)));
}

}  // namespace warpsim::reliability
