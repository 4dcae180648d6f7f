// Topology strategy: the vertices (listed in hierarchy order) are cut into R contiguous chunks of about equal
// weight, each cut placed on the coarsest hierarchy boundary (pod, then rack, then any vertex) that keeps the
// chunk within the balance tolerance; vertices of no group (kShared, e.g. core switches) then go, heaviest
// first, to the least loaded rank. It reads no edges: linear in the vertices, which a model lists
// arithmetically (a node with its switches, then racks and pods), so it suits clusters whose full LP graph
// would not fit in one rank's memory.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

#include "partition/range_map.hpp"
#include "partition/strategies.hpp"

namespace warpsim::partition {

namespace {

// Vertex index i is a level-l boundary when vertex i-1 and i differ in a coordinate at a level <= l.
bool is_boundary(const PartitionGraph& g, const std::vector<std::uint32_t>& order, std::size_t i,
                 std::uint32_t level) {
  for (std::uint32_t l = 0; l <= level && l < g.levels; ++l) {
    if (g.coord(order[i - 1], l) != g.coord(order[i], l)) return true;
  }
  return level >= g.levels;
}

class TopologyPartitioner final : public Partitioner {
 public:
  explicit TopologyPartitioner(bool striped) : striped_(striped) {}
  std::string_view name() const override { return striped_ ? "topology-striped" : "topology"; }
  GraphNeeds needs() const override { return GraphNeeds::kVertices; }

  std::unique_ptr<LpMap> partition(const PartitionGraph& g, int ranks) const override {
    check_ranks(g.lp_count, ranks);
    if (g.vertex_count() < static_cast<std::uint32_t>(ranks)) {
      throw std::invalid_argument("more ranks (" + std::to_string(ranks) + ") than " + g.granularity +
                                  " units (" + std::to_string(g.vertex_count()) + ") to place");
    }
    std::vector<std::uint32_t> ordered, shared;
    for (std::uint32_t v = 0; v < g.vertex_count(); ++v) {
      (g.levels > 0 && g.coord(v, 0) == kShared ? shared : ordered).push_back(v);
    }
    std::vector<std::int32_t> rank(g.vertex_count(), 0);
    std::vector<double> load(static_cast<std::size_t>(ranks), 0.0);
    if (striped_) {
      // Every top-level group (pod) is cut into R pieces on its own, piece k to rank k.
      for (std::size_t begin = 0; begin < ordered.size();) {
        std::size_t end = begin + 1;
        while (end < ordered.size() && g.coord(ordered[end], 0) == g.coord(ordered[begin], 0)) ++end;
        place_ordered(g,
                      {ordered.begin() + static_cast<std::ptrdiff_t>(begin),
                       ordered.begin() + static_cast<std::ptrdiff_t>(end)},
                      ranks, rank, load);
        begin = end;
      }
    } else {
      place_ordered(g, ordered, ranks, rank, load);
    }
    // Heaviest first onto the least loaded rank; ties by vertex id, so the result is deterministic.
    std::stable_sort(shared.begin(), shared.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return g.weight[a] > g.weight[b]; });
    for (std::uint32_t v : shared) {
      const auto r = static_cast<std::int32_t>(std::min_element(load.begin(), load.end()) - load.begin());
      rank[v] = r;
      load[static_cast<std::size_t>(r)] += g.weight[v];
    }
    return std::make_unique<RangeLpMap>(RangeLpMap::from_vertices(g, rank, ranks));
  }

 private:
  static void place_ordered(const PartitionGraph& g, const std::vector<std::uint32_t>& order, int ranks,
                            std::vector<std::int32_t>& rank, std::vector<double>& load) {
    const std::size_t n = order.size();
    if (n == 0) return;
    std::vector<double> prefix(n + 1, 0.0);
    for (std::size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + g.weight[order[i]];
    const double total = prefix[n];
    const double slack = kBalanceTolerance / 2 * total / ranks;  // per cut: a chunk has two
    std::vector<std::size_t> cut(static_cast<std::size_t>(ranks) + 1, 0);
    cut[static_cast<std::size_t>(ranks)] = n;
    for (int k = 1; k < ranks; ++k) {
      const double target = total * k / ranks;
      // Cuts stay strictly increasing while there are vertices left, so every rank gets some.
      const std::size_t lo = std::min(cut[static_cast<std::size_t>(k) - 1] + 1, n);
      const std::size_t hi =
          n >= static_cast<std::size_t>(ranks) ? n - static_cast<std::size_t>(ranks - k) : n;
      std::size_t chosen = n + 1;
      for (std::uint32_t level = 0; level <= g.levels && chosen > n; ++level) {
        chosen = nearest_boundary(g, order, prefix, target, lo, std::max(lo, hi), level, slack);
      }
      cut[static_cast<std::size_t>(k)] = chosen <= n ? chosen : lo;
    }
    for (int r = 0; r < ranks; ++r) {
      for (std::size_t i = cut[static_cast<std::size_t>(r)]; i < cut[static_cast<std::size_t>(r) + 1]; ++i) {
        rank[order[i]] = r;
        load[static_cast<std::size_t>(r)] += g.weight[order[i]];
      }
    }
  }

  bool striped_;

  // The level-`level` boundary in [lo, hi] whose prefix weight is nearest `target`, or n+1 when none is
  // within `slack` (the finest level always accepts the nearest vertex boundary).
  static std::size_t nearest_boundary(const PartitionGraph& g, const std::vector<std::uint32_t>& order,
                                      const std::vector<double>& prefix, double target, std::size_t lo,
                                      std::size_t hi, std::uint32_t level, double slack) {
    const std::size_t n = order.size();
    const auto mid =
        static_cast<std::size_t>(std::lower_bound(prefix.begin(), prefix.end(), target) - prefix.begin());
    std::size_t best = n + 1;
    double best_err = 0;
    auto consider = [&](std::size_t i) {
      if (i < lo || i > hi || i == 0 || i >= n) return false;
      if (!is_boundary(g, order, i, level)) return false;
      const double err = std::abs(prefix[i] - target);
      if (best > n || err < best_err) {
        best = i;
        best_err = err;
      }
      return true;
    };
    // Walk outwards from the ideal position until the weight error exceeds the slack on both sides.
    for (std::size_t i = std::min(mid, hi);; --i) {
      if (consider(i) || i <= lo || target - prefix[i] > slack) break;
    }
    for (std::size_t i = std::max(mid, lo); i <= hi; ++i) {
      if (consider(i) || prefix[i] - target > slack) break;
    }
    if (best > n) return n + 1;
    if (level < g.levels && best_err > slack) return n + 1;
    return best;
  }
};

}  // namespace

std::unique_ptr<Partitioner> make_topology_partitioner(bool striped) {
  return std::make_unique<TopologyPartitioner>(striped);
}

}  // namespace warpsim::partition
