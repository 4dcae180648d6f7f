// What the engine needs from a model: how many LPs, which type each LP is, the payload size, and the
// lookahead (the smallest delay of any event sent to another LP, used by the conservative mode).
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/lp_type.hpp"
#include "engine/sim_time.hpp"

namespace warpsim {

class Model {
 public:
  virtual ~Model() = default;

  virtual std::uint64_t lp_count() const = 0;
  virtual std::size_t type_count() const = 0;
  virtual LpType& type(std::size_t index) = 0;
  virtual std::size_t type_of(LpId lp) const = 0;
  // Largest payload (bytes) of any event kind of this model.
  virtual std::size_t payload_bytes() const = 0;
  // Minimum delay of an event sent to a different LP. 0 means the conservative mode cannot run the model.
  virtual SimTime lookahead() const = 0;
};

}  // namespace warpsim
