// Composite model with LP-id offsets (see composite_model.hpp).
#include "jobs/sweep/composite_model.hpp"

#include <algorithm>
#include <stdexcept>
#include <string_view>

#include "engine/lp_context.hpp"
#include "engine/lp_type.hpp"

namespace warpsim::sweep {

namespace {

// Forwards the inner type's sends to the engine with destinations shifted into the composite's ids.
class OffsetScheduler final : public EventScheduler {
 public:
  OffsetScheduler(EventScheduler& outer, LpId offset) : outer_(&outer), offset_(offset) {}
  void schedule(LpId dst, SimTime delay, std::uint16_t kind, const void* payload,
                std::size_t bytes) override {
    outer_->schedule(dst + offset_, delay, kind, payload, bytes);
  }

 private:
  EventScheduler* outer_;
  LpId offset_;
};

// The engine's context gives no access to its scheduler, so the wrapper sends through this one: it is
// bound to the engine context of the event being handled.
class ForwardingScheduler final : public EventScheduler {
 public:
  void bind(LpContext& ctx) { ctx_ = &ctx; }
  void schedule(LpId dst, SimTime delay, std::uint16_t kind, const void* payload,
                std::size_t bytes) override {
    ctx_->send_bytes(dst, delay, kind, payload, bytes);
  }

 private:
  LpContext* ctx_ = nullptr;
};

}  // namespace

class CompositeModel::OffsetType final : public LpType {
 public:
  OffsetType(LpType& inner, LpId offset, std::uint64_t seed, std::size_t payload_capacity)
      : inner_(inner),
        offset_(offset),
        seed_(seed),
        to_outer_(forward_, offset),
        ctx_(to_outer_, payload_capacity) {}

  std::string_view name() const override { return inner_.name(); }
  std::size_t state_bytes() const override { return inner_.state_bytes(); }
  std::uint32_t add_lp(LpId id) override { return inner_.add_lp(id - offset_); }
  void init(std::uint32_t slot, LpContext& ctx) override { inner_.init(slot, bind(ctx)); }
  void forward(std::uint32_t slot, LpContext& ctx) override { inner_.forward(slot, bind(ctx)); }
  void reverse(std::uint32_t slot, LpContext& ctx) override { inner_.reverse(slot, bind(ctx)); }
  void commit(std::uint32_t slot, LpContext& ctx) override { inner_.commit(slot, bind(ctx)); }
  void finalize(std::uint32_t slot) override { inner_.finalize(slot); }
  std::uint64_t digest(std::uint32_t slot) const override { return inner_.digest(slot); }

 private:
  LpContext& bind(LpContext& outer) {
    forward_.bind(outer);
    EventKey key = outer.event_key();
    if (key.src >= offset_) key.src -= offset_;
    ctx_.bind(outer.self() - offset_, outer.now(), key, outer.kind(), &outer.payload<std::byte>(), seed_);
    return ctx_;
  }

  LpType& inner_;
  LpId offset_;
  std::uint64_t seed_;
  ForwardingScheduler forward_;
  OffsetScheduler to_outer_;
  LpContext ctx_;
};

CompositeModel::CompositeModel(std::vector<Model*> models, std::uint64_t seed) : models_(std::move(models)) {
  if (models_.empty()) throw std::invalid_argument("CompositeModel: no models");
  for (Model* m : models_) payload_bytes_ = std::max(payload_bytes_, m->payload_bytes());
  lookahead_ = models_.front()->lookahead();
  for (Model* m : models_) {
    offsets_.push_back(total_);
    type_base_.push_back(types_.size());
    for (std::size_t t = 0; t < m->type_count(); ++t)
      types_.push_back(std::make_unique<OffsetType>(m->type(t), total_, seed, payload_bytes_));
    total_ += m->lp_count();
    lookahead_ = std::min(lookahead_, m->lookahead());
  }
}

CompositeModel::~CompositeModel() = default;

LpType& CompositeModel::type(std::size_t index) {
  return *types_.at(index);
}

std::size_t CompositeModel::type_of(LpId lp) const {
  const auto it = std::upper_bound(offsets_.begin(), offsets_.end(), lp);
  const auto k = static_cast<std::size_t>(it - offsets_.begin()) - 1;
  return type_base_[k] + models_[k]->type_of(lp - offsets_[k]);
}

}  // namespace warpsim::sweep
