// Contiguous-block partition: rank r owns LPs [r*n/R, (r+1)*n/R). Computed arithmetically, so no rank
// holds a table of the whole cluster.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/kernel/lp_map.hpp"

namespace warpsim {

class BlockLpMap final : public LpMap {
 public:
  BlockLpMap(std::uint64_t lp_count, int ranks);
  int rank_count() const override { return ranks_; }
  int rank_of(LpId lp) const override;
  std::vector<LpId> lps_of(int rank) const override;
  LpId first_of(int rank) const;

 private:
  std::uint64_t lp_count_;
  int ranks_;
};

// Round-robin partition: LP i on rank i mod R. A deliberately poor baseline, and a second partition for
// the oracle tests (results must not depend on the partition).
class RoundRobinLpMap final : public LpMap {
 public:
  RoundRobinLpMap(std::uint64_t lp_count, int ranks);
  int rank_count() const override { return ranks_; }
  int rank_of(LpId lp) const override { return static_cast<int>(lp % static_cast<std::uint32_t>(ranks_)); }
  std::vector<LpId> lps_of(int rank) const override;

 private:
  std::uint64_t lp_count_;
  int ranks_;
};

}  // namespace warpsim
