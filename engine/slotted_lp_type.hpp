// The per-LP slot bookkeeping every LP type needs, in one place: a type derived from
// SlottedLpType<State> keeps a State per LP it was given, in the order add_lp() was called (the slot), and
// writes only its behaviour (forward/reverse/commit/digest and its checkpoint format). The base owns the
// states and the LP ids behind them, answers slot_of()/id_of()/size()/state(), and offers the hooks a type
// fills in when a slot is created (make_state, on_added) or checkpointed. Part of the model API: it knows
// neither MPI nor the kernel.
#pragma once

#include <cstdint>
#include <istream>
#include <optional>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

#include "engine/checkpoint_io.hpp"
#include "engine/lp_type.hpp"

namespace warpsim {

template <class State>
class SlottedLpType : public LpType {
 public:
  // Bytes per LP for the memory report; a type with per-LP side tables or heap parts overrides it.
  std::size_t state_bytes() const override { return sizeof(State); }

  // Final: a type customizes a new slot through make_state() and on_added(), so slots, ids and states
  // can never get out of step.
  std::uint32_t add_lp(LpId id) final {
    const auto slot = static_cast<std::uint32_t>(states_.size());
    State s = make_state(id);
    states_.push_back(std::move(s));
    ids_.push_back(id);
    on_added(slot, id);
    return slot;
  }

  // Most types schedule nothing up front: they react to events other LPs send.
  void init(std::uint32_t /*slot*/, LpContext& /*ctx*/) override {}

  // The default checkpoint format is the State's bytes, which only a trivially copyable State without
  // padding the type cares about allows; a type with another format overrides checkpointable(), save()
  // and load() (and may use put_id()/expect_id() to tag its records).
  bool checkpointable() const override { return std::is_trivially_copyable_v<State>; }
  void save(std::uint32_t slot, std::ostream& out) const override {
    if constexpr (std::is_trivially_copyable_v<State>) {
      ckpt::put(out, states_[slot]);
    } else {
      LpType::save(slot, out);  // refuses, naming the type
    }
  }
  void load(std::uint32_t slot, std::istream& in) override {
    if constexpr (std::is_trivially_copyable_v<State>) {
      states_[slot] = ckpt::get<State>(in);
    } else {
      LpType::load(slot, in);
    }
  }

  // How many LPs of this type live on this rank.
  std::size_t size() const { return states_.size(); }
  const State& state(std::uint32_t slot) const { return states_[slot]; }
  LpId id_of(std::uint32_t slot) const { return ids_[slot]; }
  // The slot of LP `id`, if this rank holds it (a linear scan: for reports and tests, not handlers).
  std::optional<std::uint32_t> slot_of(LpId id) const {
    for (std::uint32_t i = 0; i < ids_.size(); ++i)
      if (ids_[i] == id) return i;
    return std::nullopt;
  }

 protected:
  // The state of a new LP. The default value-initializes it and sets its `id` member when it has one.
  virtual State make_state(LpId id) {
    State s{};
    if constexpr (requires { s.id = id; }) s.id = id;
    return s;
  }
  // Called once the slot exists (state(slot) is valid): for side tables kept per slot, and series components
  // whose local index must equal the slot.
  virtual void on_added(std::uint32_t /*slot*/, LpId /*id*/) {}

  State& mutable_state(std::uint32_t slot) { return states_[slot]; }
  // The slot of a state held by this type (for code handed a State& rather than a slot).
  std::uint32_t slot_of_state(const State& s) const {
    return static_cast<std::uint32_t>(&s - states_.data());
  }

  // Checkpoint records of the field-by-field formats start with the LP id; a record of another LP on load
  // means a mismatched or corrupt checkpoint.
  void put_id(std::ostream& out, std::uint32_t slot) const { ckpt::put(out, ids_[slot]); }
  void expect_id(std::istream& in, std::uint32_t slot) const {
    const auto id = ckpt::get<LpId>(in);
    if (id != ids_[slot]) {
      throw CheckpointError("checkpoint data is malformed: " + std::string(name()) + " record of LP " +
                            std::to_string(id) + " where LP " + std::to_string(ids_[slot]) + " was expected");
    }
  }

 private:
  std::vector<State> states_;
  std::vector<LpId> ids_;  // kept apart from State, which need not carry its id
};

}  // namespace warpsim
