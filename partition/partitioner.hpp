// Partitioner: turns a PartitionGraph (or just an LP count) into an LP -> rank map, registered by name so
// the CLI, the spec and the tests select strategies the same way:
//   block        contiguous LP ids, equal LP counts (arithmetic, no graph)
//   round-robin  LP i on rank i mod R (a deliberately bad baseline; arithmetic, no graph)
//   topology     contiguous runs of the hierarchy (node + its switches, then racks, pods), balanced by vertex
//                weight; needs vertices with coordinates, no edges
//   metis        METIS k-way on the weighted graph (minimizes cut message weight under a balance bound)
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/kernel/lp_map.hpp"
#include "partition/partition_graph.hpp"

namespace warpsim::partition {

// Balance bound the graph strategies aim for: max rank weight <= (1 + kBalanceTolerance) x mean, as long as
// no single vertex is heavier than the tolerance allows.
inline constexpr double kBalanceTolerance = 0.05;

enum class GraphNeeds { kNone, kVertices, kEdges };

class Partitioner {
 public:
  virtual ~Partitioner() = default;
  virtual std::string_view name() const = 0;
  // What the strategy reads from the graph: a caller may skip building what is not needed.
  virtual GraphNeeds needs() const = 0;
  // Throws std::invalid_argument for ranks < 1, more ranks than LPs, or a graph lacking what needs() says.
  virtual std::unique_ptr<LpMap> partition(const PartitionGraph& graph, int ranks) const = 0;
};

const std::vector<std::string>& partitioner_names();
// nullptr for an unknown name.
std::unique_ptr<Partitioner> make_partitioner(std::string_view name);
// The checks every strategy shares (ranks >= 1, ranks <= LPs).
void check_ranks(std::uint64_t lp_count, int ranks);

}  // namespace warpsim::partition
