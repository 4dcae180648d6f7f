// Partition quality: how much expected message weight crosses ranks (edge cut), how even the expected work
// is (imbalance = max rank weight / mean), and what each rank holds. Exact when every vertex of the graph
// lies on one rank (always so for an LP-granularity graph); otherwise a split vertex counts on the rank of
// its first LP and `split_vertices` says how many there were.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/kernel/lp_map.hpp"
#include "partition/partition_graph.hpp"

namespace warpsim::partition {

struct PartitionQuality {
  double message_weight = 0;       // total expected message weight
  double cut_weight = 0;           // of which between LPs on different ranks
  double edge_cut = 0;             // cut_weight / message_weight
  double imbalance = 0;            // max rank weight / mean rank weight
  std::vector<std::uint64_t> lps;  // per rank
  std::vector<double> weight;      // per rank
  std::uint64_t split_vertices = 0;
};

PartitionQuality evaluate(const PartitionGraph& graph, const LpMap& map);

}  // namespace warpsim::partition
