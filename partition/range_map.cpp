// Run-length LP -> rank map (see range_map.hpp).
#include "partition/range_map.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "partition/partitioner.hpp"

namespace warpsim::partition {

RangeLpMap::RangeLpMap(std::vector<Run> runs, std::uint64_t lp_count, int ranks)
    : lp_count_(lp_count), ranks_(ranks) {
  check_ranks(lp_count, ranks);
  if (runs.empty() || runs.front().first != 0)
    throw std::invalid_argument("partition map: LP 0 is not mapped");
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].rank < 0 || runs[i].rank >= ranks) {
      throw std::invalid_argument("partition map: rank " + std::to_string(runs[i].rank) + " out of range");
    }
    if (i > 0 && runs[i].first <= runs[i - 1].first)
      throw std::invalid_argument("partition map: unsorted runs");
    if (runs[i].first >= lp_count) throw std::invalid_argument("partition map: run beyond the LP count");
    if (!runs_.empty() && runs_.back().rank == runs[i].rank) continue;  // merge
    runs_.push_back(runs[i]);
  }
  runs_.shrink_to_fit();
}

RangeLpMap RangeLpMap::from_vertices(const PartitionGraph& g, const std::vector<std::int32_t>& rank_of_vertex,
                                     int ranks) {
  if (rank_of_vertex.size() != g.vertex_count()) throw std::logic_error("partition: one rank per vertex");
  std::vector<Run> runs;
  runs.reserve(g.ranges.size());
  for (std::uint32_t v = 0; v < g.vertex_count(); ++v) {
    for (std::uint32_t i = g.range_begin[v]; i < g.range_begin[v + 1]; ++i) {
      if (g.ranges[i].count != 0) runs.push_back({g.ranges[i].first, rank_of_vertex[v]});
    }
  }
  std::sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) { return a.first < b.first; });
  return RangeLpMap(std::move(runs), g.lp_count, ranks);
}

int RangeLpMap::rank_of(LpId lp) const {
  // Last run starting at or before lp.
  const auto it = std::upper_bound(runs_.begin(), runs_.end(), lp,
                                   [](LpId value, const Run& r) { return value < r.first; });
  return std::prev(it)->rank;
}

std::vector<LpId> RangeLpMap::lps_of(int rank) const {
  std::vector<LpId> out;
  for (std::size_t i = 0; i < runs_.size(); ++i) {
    if (runs_[i].rank != rank) continue;
    const std::uint64_t end = i + 1 < runs_.size() ? runs_[i + 1].first : lp_count_;
    for (std::uint64_t lp = runs_[i].first; lp < end; ++lp) out.push_back(static_cast<LpId>(lp));
  }
  return out;
}

}  // namespace warpsim::partition
