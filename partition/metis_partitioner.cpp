// METIS strategy: k-way partitioning (Debian's libmetis 5) of the weighted graph, minimizing the message
// weight cut between ranks under a balance bound of 1 + kBalanceTolerance. Weights are scaled to METIS's
// 32-bit integers. Deterministic: a fixed seed, so every rank that computes the map gets the same one. The
// caller chooses the graph's granularity: a node or rack level graph keeps a large cluster's graph small.
#include <metis.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "partition/range_map.hpp"
#include "partition/strategies.hpp"

namespace warpsim::partition {

namespace {

// Scales weights so that their sum stays well inside idx_t; every positive weight stays >= 1.
std::vector<idx_t> scaled(const std::vector<double>& w, double total, double budget) {
  const double scale = total > budget ? budget / total : 1.0;
  std::vector<idx_t> out(w.size());
  for (std::size_t i = 0; i < w.size(); ++i) {
    const double x = std::round(w[i] * scale);
    out[i] = static_cast<idx_t>(w[i] > 0 ? std::max(1.0, x) : 0.0);
  }
  return out;
}

class MetisPartitioner final : public Partitioner {
 public:
  std::string_view name() const override { return "metis"; }
  GraphNeeds needs() const override { return GraphNeeds::kEdges; }

  std::unique_ptr<LpMap> partition(const PartitionGraph& g, int ranks) const override {
    check_ranks(g.lp_count, ranks);
    const std::uint32_t n = g.vertex_count();
    if (n < static_cast<std::uint32_t>(ranks)) {
      throw std::invalid_argument("more ranks (" + std::to_string(ranks) + ") than " + g.granularity +
                                  " units (" + std::to_string(n) + ") to place");
    }
    if (!g.has_edges()) throw std::invalid_argument("metis: the graph has no edges");
    std::vector<std::int32_t> part(n, 0);
    if (ranks > 1) {
      idx_t nvtxs = static_cast<idx_t>(n), ncon = 1, nparts = ranks, objval = 0;
      std::vector<idx_t> xadj(g.edge_begin.begin(), g.edge_begin.end());
      std::vector<idx_t> adjncy(g.edge_to.begin(), g.edge_to.end());
      double edge_total = 0;
      for (double w : g.edge_weight) edge_total += w;
      std::vector<idx_t> vwgt = scaled(g.weight, g.total_weight(), 5e8);
      std::vector<idx_t> adjwgt = scaled(g.edge_weight, edge_total, 5e8);
      // METIS rejects zero edge weights; such an edge carries nothing, so weight 1 is harmless.
      for (idx_t& w : adjwgt) w = std::max<idx_t>(w, 1);
      std::vector<idx_t> where(n, 0);
      idx_t options[METIS_NOPTIONS];
      METIS_SetDefaultOptions(options);
      options[METIS_OPTION_OBJTYPE] = METIS_OBJTYPE_CUT;
      options[METIS_OPTION_UFACTOR] = 10;  // 1.01: METIS overshoots its bound on coarse graphs
      options[METIS_OPTION_SEED] = 1;
      options[METIS_OPTION_NUMBERING] = 0;
      const int status =
          METIS_PartGraphKway(&nvtxs, &ncon, xadj.data(), adjncy.data(), vwgt.data(), nullptr, adjwgt.data(),
                              &nparts, nullptr, nullptr, options, &objval, where.data());
      if (status != METIS_OK)
        throw std::runtime_error("metis: METIS_PartGraphKway failed (" + std::to_string(status) + ")");
      for (std::uint32_t v = 0; v < n; ++v) part[v] = static_cast<std::int32_t>(where[v]);
    }
    return std::make_unique<RangeLpMap>(RangeLpMap::from_vertices(g, part, ranks));
  }
};

}  // namespace

std::unique_ptr<Partitioner> make_metis_partitioner() {
  return std::make_unique<MetisPartitioner>();
}

}  // namespace warpsim::partition
