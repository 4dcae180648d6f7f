// Where each LP lives: the engine's view of a partition. Implementations live in partition/; they must
// answer for any LP without a global table where that is possible (arithmetic maps).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/sim_time.hpp"

namespace warpsim {

class LpMap {
 public:
  virtual ~LpMap() = default;
  virtual int rank_count() const = 0;
  virtual int rank_of(LpId lp) const = 0;
  // The LPs owned by `rank`, in increasing id order.
  virtual std::vector<LpId> lps_of(int rank) const = 0;
};

}  // namespace warpsim
