// The collective-algorithm registry (see collective_algorithms.hpp).
#include "models/cluster/collective_algorithms.hpp"

#include <array>

#include "models/cluster/collectives.hpp"  // to_string(Collective)

namespace warpsim::cluster {

namespace {

constexpr std::uint32_t bit(Collective c) {
  return 1u << static_cast<unsigned>(c);
}
constexpr std::uint32_t kAll = bit(Collective::kAllReduce) | bit(Collective::kAllGather) |
                               bit(Collective::kReduceScatter) | bit(Collective::kAllToAll) |
                               bit(Collective::kBroadcast);

// Indexed by Algorithm.
constexpr std::array<CollectiveAlgorithm, 3> kAlgorithms = {{
    // Rings (and pairwise all-to-all): the default, and the training adapter's own expansion.
    {Algorithm::kRing, "ring", kAll, false, true},
    // The pipelined double binary tree (tree_collectives.hpp; training: tree_schedule.hpp).
    {Algorithm::kTree, "tree", bit(Collective::kAllReduce) | bit(Collective::kBroadcast), false, true},
    // Rings inside the nodes and per-rail rings across them (hierarchical_collectives.hpp).
    {Algorithm::kHierarchical, "hierarchical", kAll & ~bit(Collective::kAllToAll), true, false},
}};

constexpr bool indexed_by_id() {
  for (std::size_t i = 0; i < kAlgorithms.size(); ++i)
    if (static_cast<std::size_t>(kAlgorithms[i].id) != i) return false;
  return true;
}
static_assert(indexed_by_id(), "kAlgorithms must be in Algorithm order");

}  // namespace

std::span<const CollectiveAlgorithm> collective_algorithms() {
  return kAlgorithms;
}

const CollectiveAlgorithm* find_collective_algorithm(std::string_view name) {
  for (const CollectiveAlgorithm& a : kAlgorithms)
    if (a.name == name) return &a;
  return nullptr;
}

const CollectiveAlgorithm& collective_algorithm(Algorithm id) {
  return kAlgorithms[static_cast<std::size_t>(id)];
}

const CollectiveAlgorithm* find_dp_allreduce_algorithm(std::string_view name) {
  const CollectiveAlgorithm* a = find_collective_algorithm(name.empty() ? "ring" : name);
  return a != nullptr && a->training_dp_allreduce ? a : nullptr;
}

std::string collective_algorithm_names() {
  std::string out;
  for (const CollectiveAlgorithm& a : kAlgorithms) {
    if (!out.empty()) out += ", ";
    out += a.name;
  }
  return out;
}

std::string_view to_string(Algorithm a) {
  return collective_algorithm(a).name;
}

bool supports(Algorithm algorithm, Collective collective) {
  return collective_algorithm(algorithm).implements(collective);
}

std::string supported_collectives(Algorithm algorithm) {
  std::string out;
  for (const Collective c : {Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter,
                             Collective::kAllToAll, Collective::kBroadcast}) {
    if (!supports(algorithm, c)) continue;
    if (!out.empty()) out += ", ";
    out += to_string(c);
  }
  return out;
}

}  // namespace warpsim::cluster
