// Which MPI ranks simulate when a node's CPUs are shared. A Time Warp rank that is descheduled stalls its
// peers or gets rolled back by them, so ranks that do not each have a free CPU run slower than fewer ranks
// would (docs/scale.md, "Shared cores": 2 ranks beside a busy process took 1.3-2.6x the sequential time).
// Before a run, the ranks of each node measure for 100 ms how busy the CPUs they may run on are with other
// processes (/proc/stat; a node where that or the affinity masks cannot be read keeps every rank), and only
// as many ranks per node as there are free CPUs (at least one) simulate, on a communicator of their own; the
// rest sleep until the run is over and then exit with its exit code. Results do not depend on the rank count
// (the engine's oracle), only the run's speed does.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace warpsim {

enum class SharedNodePolicy {
  kShrink,  // simulate on as many ranks per node as it has free CPUs (the default)
  kKeep,    // simulate on every rank, however busy the node is
};

// "shrink" | "keep"; false when the text is neither.
bool parse_shared_node_policy(const std::string& text, SharedNodePolicy& policy);

// Ranks with a whole free CPU each: floor(cpus - busy + 0.15), at least 1, at most `ranks_on_node` (the
// 0.15 forgives the probe's own noise: a shell or a daemon waking up during the 100 ms).
int active_ranks_for(int cpus, double busy_cpus, int ranks_on_node);

// Splits `world` into the ranks that simulate and the ranks that wait. Collective over `world`. Every node's
// first rank (world rank 0 among them) always simulates. RAII: the communicator is freed, and world rank 0
// releases the waiting ranks, on destruction at the latest (with exit code 2, the usage-error code, when
// release() was not called: the command threw).
class ActiveRanks {
 public:
  ActiveRanks(MPI_Comm world, SharedNodePolicy policy);
  ~ActiveRanks();
  ActiveRanks(const ActiveRanks&) = delete;
  ActiveRanks& operator=(const ActiveRanks&) = delete;

  bool simulates() const { return comm_ != MPI_COMM_NULL; }
  MPI_Comm comm() const { return comm_; }  // the simulating ranks (MPI_COMM_NULL on a waiting rank)
  // One line for the log when ranks wait, else empty.
  const std::string& note() const { return note_; }

  // A waiting rank: sleeps (without spinning) until world rank 0 releases it; returns the run's exit code.
  int wait();
  // World rank 0, once the command is done: tells every waiting rank the exit code. Others: no-op.
  void release(int exit_code);

 private:
  MPI_Comm world_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  bool released_ = false;
  std::vector<int> waiting_;  // world rank 0: the ranks that wait
  std::string note_;
};

}  // namespace warpsim
