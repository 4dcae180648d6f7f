// The simulating-rank choice of the simulating subcommands (see simulating_ranks.hpp).
#include "jobs/cli/simulating_ranks.hpp"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <string>

#include "engine/kernel/active_ranks.hpp"
#include "jobs/cli/usage_error.hpp"

namespace warpsim::cli {

int on_simulating_ranks(const experiment::EngineOptions& engine, bool checkpoints,
                        const std::function<int(MPI_Comm)>& body) {
  std::string text = engine.shared_node;
  std::string source = "--shared-node";
  if (text.empty()) {
    const char* env = std::getenv("WARPSIM_SHARED_NODE");
    text = env != nullptr && *env != '\0' ? env : "shrink";
    if (env != nullptr && *env != '\0') source = "WARPSIM_SHARED_NODE";
  }
  SharedNodePolicy policy = SharedNodePolicy::kShrink;
  if (!parse_shared_node_policy(text, policy))
    throw UsageError(source + ": expected shrink or keep (got '" + text + "')");
  if (engine.sync == "sequential" || checkpoints) policy = SharedNodePolicy::kKeep;

  ActiveRanks ranks(MPI_COMM_WORLD, policy);
  if (!ranks.simulates()) return ranks.wait();
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  if (world_rank == 0 && !ranks.note().empty()) spdlog::warn("{}", ranks.note());
  const int code = body(ranks.comm());
  ranks.release(code);
  return code;
}

}  // namespace warpsim::cli
