// Partition quality (see quality.hpp).
#include "partition/quality.hpp"

#include <algorithm>
#include <stdexcept>

namespace warpsim::partition {

PartitionQuality evaluate(const PartitionGraph& g, const LpMap& map) {
  if (!g.has_edges()) throw std::invalid_argument("partition quality: the graph has no edges");
  const auto ranks = static_cast<std::size_t>(map.rank_count());
  PartitionQuality q;
  q.lps.assign(ranks, 0);
  q.weight.assign(ranks, 0.0);
  std::vector<int> vertex_rank(g.vertex_count(), 0);
  for (std::uint32_t v = 0; v < g.vertex_count(); ++v) {
    int first = -1;
    bool split = false;
    for (std::uint32_t i = g.range_begin[v]; i < g.range_begin[v + 1]; ++i) {
      const LpRange& r = g.ranges[i];
      for (std::uint64_t lp = r.first; lp < std::uint64_t{r.first} + r.count; ++lp) {
        const int rank = map.rank_of(static_cast<LpId>(lp));
        ++q.lps[static_cast<std::size_t>(rank)];
        if (first < 0) first = rank;
        split = split || rank != first;
      }
    }
    vertex_rank[v] = std::max(first, 0);
    q.split_vertices += split ? 1 : 0;
    q.weight[static_cast<std::size_t>(vertex_rank[v])] += g.weight[v];
  }
  for (std::uint32_t v = 0; v < g.vertex_count(); ++v) {
    for (std::uint64_t e = g.edge_begin[v]; e < g.edge_begin[v + 1]; ++e) {
      if (vertex_rank[v] != vertex_rank[g.edge_to[e]]) q.cut_weight += g.edge_weight[e];
    }
  }
  q.cut_weight /= 2;  // each edge is listed from both ends
  q.message_weight = g.total_message_weight();
  q.edge_cut = q.message_weight > 0 ? q.cut_weight / q.message_weight : 0.0;
  double total = 0, max = 0;
  for (double w : q.weight) {
    total += w;
    max = std::max(max, w);
  }
  q.imbalance = total > 0 ? max / (total / static_cast<double>(ranks)) : 1.0;
  return q;
}

}  // namespace warpsim::partition
