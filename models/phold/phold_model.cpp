// PHOLD logical process (see phold_model.hpp).
#include "models/phold/phold_model.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace warpsim::phold {

namespace {
std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}
std::uint64_t key_hash(const EventKey& k) {
  return mix(k.time ^ mix(k.order ^ mix(k.src)));
}
}  // namespace

SimTime to_engine_time(double units) {
  return static_cast<SimTime>(std::llround(units * static_cast<double>(kTimeUnit)));
}

PholdLp::PholdLp(const PholdParams& params, SeriesRecorder* recorder)
    : params_(params), lookahead_ps_(to_engine_time(params.lookahead)), recorder_(recorder) {
  if (recorder_ == nullptr) return;
  series_kind_ = recorder_->declare_kind(
      std::string(kSeriesKind), params.lp_count,
      {MetricSpec{"events", "events", Aggregation::kSum, "events the LP handled (committed) in the interval"},
       MetricSpec{"remote_events", "events", Aggregation::kSum,
                  "handled events that another LP had sent (a subset of events)"}});
}

void PholdLp::on_added(std::uint32_t slot, LpId id) {
  if (recorder_ != nullptr) {
    // The LP's slot is its component's local index (the type registers one component per LP, in order).
    const auto component = recorder_->add_component(series_kind_, id, "lp" + std::to_string(id));
    if (component.local != slot) throw std::logic_error("phold: component and slot out of step");
  }
}

SimTime PholdLp::draw_delay(LpContext& ctx) const {
  return lookahead_ps_ + to_engine_time(ctx.rng().exponential(params_.mean));
}

void PholdLp::init(std::uint32_t, LpContext& ctx) {
  for (std::uint32_t i = 0; i < params_.start_events; ++i) ctx.send(ctx.self(), draw_delay(ctx), 0);
}

void PholdLp::forward(std::uint32_t slot, LpContext& ctx) {
  State& s = mutable_state(slot);
  ++s.handled;
  s.checksum += key_hash(ctx.event_key());
  LpId dst = ctx.self();
  if (ctx.rng().uniform() <= params_.remote) dst = static_cast<LpId>(ctx.rng().below(params_.lp_count));
  ctx.send(dst, draw_delay(ctx), 0);
}

void PholdLp::reverse(std::uint32_t slot, LpContext& ctx) {
  State& s = mutable_state(slot);
  --s.handled;
  s.checksum -= key_hash(ctx.event_key());
}

void PholdLp::commit(std::uint32_t slot, LpContext& ctx) {
  // Only committed events reach the series, so rollbacks never show in the output.
  if (recorder_ == nullptr) return;
  const SeriesRecorder::Component component{series_kind_, slot};
  recorder_->add(component, kEvents, ctx.now(), 1.0);
  if (ctx.event_key().src != ctx.self()) recorder_->add(component, kRemoteEvents, ctx.now(), 1.0);
}

std::uint64_t PholdLp::digest(std::uint32_t slot) const {
  return mix(state(slot).handled ^ mix(state(slot).checksum));
}

}  // namespace warpsim::phold
