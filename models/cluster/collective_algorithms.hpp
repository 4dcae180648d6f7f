// The one registry of collective algorithms: each entry names an algorithm, says which collectives it
// implements and what it needs, and is the single place both users dispatch through: the collective
// command (--algorithm) with CollectiveProgram, and the training adapter's data-parallel all-reduce
// (training.dp_allreduce_algorithm). A new algorithm is one entry here plus its expansion (a schedule in
// CollectiveProgram, and in the training adapter if the entry allows the DP all-reduce).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace warpsim::cluster {

enum class Collective { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kBroadcast };
enum class Algorithm { kRing, kTree, kHierarchical };

struct CollectiveAlgorithm {
  Algorithm id;
  std::string_view name;       // as --algorithm and training.dp_allreduce_algorithm spell it
  std::uint32_t collectives;   // bit (1 << Collective) for each collective it implements
  bool node_local_groups;      // splits the group into node-local ranks: the local size must divide it
  bool training_dp_allreduce;  // the training adapter can run the data-parallel all-reduce this way

  bool implements(Collective c) const { return (collectives >> static_cast<unsigned>(c)) & 1u; }
};

// Every algorithm, in the order messages list them.
std::span<const CollectiveAlgorithm> collective_algorithms();
// The algorithm named `name`, or null.
const CollectiveAlgorithm* find_collective_algorithm(std::string_view name);
// The entry of `id` (every Algorithm has one).
const CollectiveAlgorithm& collective_algorithm(Algorithm id);
// The algorithm training.dp_allreduce_algorithm names ("" = ring), or null for one the training adapter
// does not implement.
const CollectiveAlgorithm* find_dp_allreduce_algorithm(std::string_view name);
// The names, for messages: "ring, tree, hierarchical".
std::string collective_algorithm_names();

std::string_view to_string(Algorithm a);
bool supports(Algorithm algorithm, Collective collective);
// The collectives `algorithm` implements, for messages: "allreduce, broadcast".
std::string supported_collectives(Algorithm algorithm);

}  // namespace warpsim::cluster
