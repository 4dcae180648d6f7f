// An LP -> rank map stored as sorted runs of consecutive LP ids with the same rank. Memory is 8 bytes per
// run, not per LP: the topology strategy yields a few runs per rank, METIS on a node-level graph at most one
// run per node or switch, and a map file's ranges load as they are. rank_of is a binary search over runs.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/kernel/lp_map.hpp"
#include "partition/partition_graph.hpp"

namespace warpsim::partition {

class RangeLpMap final : public LpMap {
 public:
  struct Run {
    LpId first;
    std::int32_t rank;
  };
  // `runs` sorted by first, starting at LP 0, covering [0, lp_count); adjacent runs with equal ranks are
  // merged. Throws std::invalid_argument on an inconsistent description.
  RangeLpMap(std::vector<Run> runs, std::uint64_t lp_count, int ranks);
  // From one rank per vertex of `graph`.
  static RangeLpMap from_vertices(const PartitionGraph& graph,
                                  const std::vector<std::int32_t>& rank_of_vertex, int ranks);

  int rank_count() const override { return ranks_; }
  int rank_of(LpId lp) const override;
  std::vector<LpId> lps_of(int rank) const override;
  const std::vector<Run>& runs() const { return runs_; }
  std::uint64_t lp_count() const { return lp_count_; }

 private:
  std::vector<Run> runs_;
  std::uint64_t lp_count_;
  int ranks_;
};

}  // namespace warpsim::partition
