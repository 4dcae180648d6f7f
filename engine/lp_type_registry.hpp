// The LP types of a model, numbered in registration order, and which type each kind of LP is. A model
// registers each of its types once, with the LP kinds it claims (its classifier maps an LP to a kind), and
// answers the engine's type_count()/type()/type_of() from here instead of hand-numbered switches. The order
// of registration is the type index, which checkpoints and digests may depend on: append new types last.
// Part of the model API: it knows neither MPI nor the kernel.
#pragma once

#include <concepts>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine/lp_type.hpp"

namespace warpsim {

// `Kind` is the model's classification of its LPs: an enum or integer, dense from 0.
template <class Kind>
class LpTypeRegistry {
 public:
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

  // Registers `type` (owned by the caller, who keeps it alive) at the next index, as the type of the LPs of
  // `kinds`. A type may claim no kind (it stays registered, so later indices do not move). Returns it.
  template <std::derived_from<LpType> T>
  T& add(T& type, const std::vector<Kind>& kinds = {}) {
    const std::size_t index = types_.size();
    types_.push_back(&type);
    for (const Kind k : kinds) claim(k, index);
    return type;
  }
  // As add(), for a type the registry builds and owns.
  template <std::derived_from<LpType> T, class... Args>
  T& emplace(const std::vector<Kind>& kinds, Args&&... args) {
    auto& t = *owned_.emplace_back(std::make_unique<T>(std::forward<Args>(args)...));
    return add(static_cast<T&>(t), kinds);
  }

  std::size_t count() const { return types_.size(); }
  LpType& type(std::size_t index) const {
    if (index >= types_.size()) throw std::out_of_range("no LP type " + std::to_string(index));
    return *types_[index];
  }
  // The index of the type registered for LPs of `kind`.
  std::size_t index_of(Kind kind) const {
    const auto k = static_cast<std::size_t>(kind);
    if (k >= by_kind_.size() || by_kind_[k] == kNone)
      throw std::out_of_range("no LP type registered for LP kind " + std::to_string(k));
    return by_kind_[k];
  }

 private:
  void claim(Kind kind, std::size_t index) {
    const auto k = static_cast<std::size_t>(kind);
    if (k >= by_kind_.size()) by_kind_.resize(k + 1, kNone);
    if (by_kind_[k] != kNone)
      throw std::logic_error("LP kind " + std::to_string(k) + " claimed by two LP types");
    by_kind_[k] = index;
  }

  std::vector<LpType*> types_;                  // by index
  std::vector<std::unique_ptr<LpType>> owned_;  // those emplace() built
  std::vector<std::size_t> by_kind_;            // kind -> index, kNone where unclaimed
};

}  // namespace warpsim
