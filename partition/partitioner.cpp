// The strategy registry and the two arithmetic strategies (see partitioner.hpp).
#include "partition/partitioner.hpp"

#include <stdexcept>
#include <string>

#include "partition/block_map.hpp"
#include "partition/strategies.hpp"

namespace warpsim::partition {

void check_ranks(std::uint64_t lp_count, int ranks) {
  if (ranks < 1) throw std::invalid_argument("ranks must be >= 1 (got " + std::to_string(ranks) + ")");
  if (lp_count < static_cast<std::uint64_t>(ranks)) {
    throw std::invalid_argument("more ranks (" + std::to_string(ranks) + ") than LPs (" +
                                std::to_string(lp_count) + ")");
  }
}

namespace {

class BlockPartitioner final : public Partitioner {
 public:
  std::string_view name() const override { return "block"; }
  GraphNeeds needs() const override { return GraphNeeds::kNone; }
  std::unique_ptr<LpMap> partition(const PartitionGraph& g, int ranks) const override {
    check_ranks(g.lp_count, ranks);
    return std::make_unique<BlockLpMap>(g.lp_count, ranks);
  }
};

class RoundRobinPartitioner final : public Partitioner {
 public:
  std::string_view name() const override { return "round-robin"; }
  GraphNeeds needs() const override { return GraphNeeds::kNone; }
  std::unique_ptr<LpMap> partition(const PartitionGraph& g, int ranks) const override {
    check_ranks(g.lp_count, ranks);
    return std::make_unique<RoundRobinLpMap>(g.lp_count, ranks);
  }
};

}  // namespace

std::unique_ptr<Partitioner> make_block_partitioner() {
  return std::make_unique<BlockPartitioner>();
}
std::unique_ptr<Partitioner> make_round_robin_partitioner() {
  return std::make_unique<RoundRobinPartitioner>();
}

const std::vector<std::string>& partitioner_names() {
  static const std::vector<std::string> names{"block", "round-robin", "topology", "topology-striped",
                                              "metis"};
  return names;
}

std::unique_ptr<Partitioner> make_partitioner(std::string_view name) {
  if (name == "block") return make_block_partitioner();
  if (name == "round-robin") return make_round_robin_partitioner();
  if (name == "topology") return make_topology_partitioner(false);
  if (name == "topology-striped") return make_topology_partitioner(true);
  if (name == "metis") return make_metis_partitioner();
  return nullptr;
}

}  // namespace warpsim::partition
