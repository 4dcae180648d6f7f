// The generic LP graph description partitioners work on. partition/ knows nothing of GPUs or networks: a
// model describes its LPs as weighted vertices, each standing for one or more contiguous LP id ranges (an
// LP, or a coarsened group of LPs such as a node or a rack), with weighted undirected edges between them.
//
//   weight        expected work of the vertex (events it processes per simulated unit of work)
//   edges (CSR)   expected message weight between two vertices (events exchanged, both directions)
//   internal      message weight between LPs inside one vertex (never cut; counts in the cut's denominator)
//   coords        optional hierarchy (outermost level first, e.g. {pod, rack}); vertices are listed in
//                 hierarchy order, and kShared marks vertices that belong to no group (spread for balance)
//
// Edges are optional: the topology strategy needs only the vertex list, so a model can describe a huge
// cluster at node granularity without holding its edges (see has_edges()).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/sim_time.hpp"

namespace warpsim::partition {

struct LpRange {
  LpId first = 0;
  std::uint32_t count = 0;
};

inline constexpr std::uint32_t kShared = 0xffffffffu;

struct PartitionGraph {
  std::uint64_t lp_count = 0;
  std::string granularity;  // what one vertex stands for ("lp", "node", "group"), for reports

  // Vertex v owns ranges [range_begin[v], range_begin[v + 1]).
  std::vector<std::uint32_t> range_begin{0};
  std::vector<LpRange> ranges;
  std::vector<double> weight;

  // Hierarchy coordinates: levels() values per vertex, row-major; empty when there is no hierarchy.
  std::uint32_t levels = 0;
  std::vector<std::uint32_t> coords;

  // Undirected edges in CSR form (each edge listed from both ends, same weight); empty when not built.
  std::vector<std::uint64_t> edge_begin;
  std::vector<std::uint32_t> edge_to;
  std::vector<double> edge_weight;
  double internal_weight = 0;

  std::uint32_t vertex_count() const { return static_cast<std::uint32_t>(weight.size()); }
  bool has_edges() const { return !edge_begin.empty(); }
  std::uint32_t coord(std::uint32_t v, std::uint32_t level) const { return coords[v * levels + level]; }
  // Adds a vertex owning `ranges_of_vertex` with `coords_of_vertex` (levels values, or none).
  void add_vertex(const std::vector<LpRange>& ranges_of_vertex, double w,
                  const std::vector<std::uint32_t>& coords_of_vertex = {});
  // Total expected message weight: every edge once plus the internal weight.
  double total_message_weight() const;
  double total_weight() const;
};

// Throws std::invalid_argument unless every LP in [0, lp_count) belongs to exactly one vertex, the CSR
// arrays are consistent and every weight is finite and >= 0.
void validate(const PartitionGraph& graph);

}  // namespace warpsim::partition
