// PartitionGraph helpers (see partition_graph.hpp).
#include "partition/partition_graph.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace warpsim::partition {

void PartitionGraph::add_vertex(const std::vector<LpRange>& ranges_of_vertex, double w,
                                const std::vector<std::uint32_t>& coords_of_vertex) {
  if (coords_of_vertex.size() != levels) throw std::logic_error("partition graph: wrong coordinate count");
  ranges.insert(ranges.end(), ranges_of_vertex.begin(), ranges_of_vertex.end());
  range_begin.push_back(static_cast<std::uint32_t>(ranges.size()));
  weight.push_back(w);
  coords.insert(coords.end(), coords_of_vertex.begin(), coords_of_vertex.end());
}

double PartitionGraph::total_message_weight() const {
  double sum = 0;
  for (double w : edge_weight) sum += w;
  return sum / 2 + internal_weight;  // CSR lists each edge from both ends
}

double PartitionGraph::total_weight() const {
  double sum = 0;
  for (double w : weight) sum += w;
  return sum;
}

void validate(const PartitionGraph& g) {
  const std::uint32_t n = g.vertex_count();
  if (g.range_begin.size() != n + std::size_t{1} || g.range_begin.back() != g.ranges.size()) {
    throw std::invalid_argument("partition graph: range index does not match the vertex count");
  }
  if (g.coords.size() != std::size_t{n} * g.levels)
    throw std::invalid_argument("partition graph: coordinate count");
  std::vector<LpRange> sorted = g.ranges;
  std::sort(sorted.begin(), sorted.end(),
            [](const LpRange& a, const LpRange& b) { return a.first < b.first; });
  std::uint64_t next = 0;
  for (const LpRange& r : sorted) {
    if (r.count == 0) continue;
    if (r.first != next) {
      throw std::invalid_argument("partition graph: LP " +
                                  std::to_string(std::min<std::uint64_t>(r.first, next)) +
                                  (r.first > next ? " belongs to no vertex" : " belongs to two vertices"));
    }
    next += r.count;
  }
  if (next != g.lp_count)
    throw std::invalid_argument("partition graph: LP " + std::to_string(next) + " missing");
  for (double w : g.weight) {
    if (!std::isfinite(w) || w < 0) throw std::invalid_argument("partition graph: bad vertex weight");
  }
  if (!g.has_edges()) return;
  if (g.edge_begin.size() != n + std::size_t{1} || g.edge_begin.back() != g.edge_to.size() ||
      g.edge_to.size() != g.edge_weight.size()) {
    throw std::invalid_argument("partition graph: edge index does not match the vertex count");
  }
  for (std::size_t i = 0; i < g.edge_to.size(); ++i) {
    if (g.edge_to[i] >= n || !std::isfinite(g.edge_weight[i]) || g.edge_weight[i] < 0) {
      throw std::invalid_argument("partition graph: bad edge " + std::to_string(i));
    }
  }
}

}  // namespace warpsim::partition
