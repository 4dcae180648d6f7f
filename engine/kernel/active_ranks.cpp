// The shared-node probe and the split into simulating and waiting ranks (see active_ranks.hpp).
#include "engine/kernel/active_ranks.hpp"

#include <sched.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>
#include <vector>

namespace warpsim {

namespace {

constexpr int kReleaseTag = 0x5711;
constexpr auto kProbeWindow = std::chrono::milliseconds(100);
constexpr int kMaskWords = CPU_SETSIZE / 64;

// Busy and total jiffies per CPU from /proc/stat (empty where it cannot be read: not Linux).
std::map<int, std::pair<std::uint64_t, std::uint64_t>> read_cpu_times() {
  std::map<int, std::pair<std::uint64_t, std::uint64_t>> out;
  std::ifstream in("/proc/stat");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("cpu", 0) != 0 || line.size() < 4 || line[3] < '0' || line[3] > '9') continue;
    std::istringstream fields(line.substr(3));
    int cpu = 0;
    std::uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
    fields >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
    if (!fields && !fields.eof()) continue;
    // Steal counts as busy: time the hypervisor gave this virtual CPU to someone else.
    const std::uint64_t busy = user + nice + system + irq + softirq + steal;
    out[cpu] = {busy, busy + idle + iowait};
  }
  return out;
}

std::array<std::uint64_t, kMaskWords> affinity_mask() {
  std::array<std::uint64_t, kMaskWords> mask{};
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return mask;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) mask[cpu / 64] |= std::uint64_t{1} << (cpu % 64);
  return mask;
}

}  // namespace

bool parse_shared_node_policy(const std::string& text, SharedNodePolicy& policy) {
  if (text == "shrink") {
    policy = SharedNodePolicy::kShrink;
    return true;
  }
  if (text == "keep") {
    policy = SharedNodePolicy::kKeep;
    return true;
  }
  return false;
}

int active_ranks_for(int cpus, double busy_cpus, int ranks_on_node) {
  const double free_cpus = static_cast<double>(cpus) - busy_cpus;
  const int whole = static_cast<int>(std::floor(free_cpus + 0.15));
  return std::clamp(whole, 1, std::max(1, ranks_on_node));
}

ActiveRanks::ActiveRanks(MPI_Comm world, SharedNodePolicy policy) : world_(world) {
  int world_rank = 0;
  int world_size = 1;
  MPI_Comm_rank(world_, &world_rank);
  MPI_Comm_size(world_, &world_size);
  if (world_size == 1 || policy == SharedNodePolicy::kKeep) {
    MPI_Comm_dup(world_, &comm_);
    return;
  }
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(world_, MPI_COMM_TYPE_SHARED, world_rank, MPI_INFO_NULL, &node);
  int node_rank = 0;
  int ranks_on_node = 1;
  MPI_Comm_rank(node, &node_rank);
  MPI_Comm_size(node, &ranks_on_node);

  std::array<std::uint64_t, kMaskWords> mask = affinity_mask();
  MPI_Allreduce(MPI_IN_PLACE, mask.data(), kMaskWords, MPI_UINT64_T, MPI_BOR, node);
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (mask[cpu / 64] >> (cpu % 64) & 1) cpus.push_back(cpu);

  // Every rank of the node sleeps through the window (a rank waiting in MPI would spin and look busy); the
  // node's first rank reads the CPU counters on both sides of it.
  MPI_Barrier(node);
  const auto before = node_rank == 0 ? read_cpu_times() : decltype(read_cpu_times()){};
  std::this_thread::sleep_for(kProbeWindow);
  const auto after = node_rank == 0 ? read_cpu_times() : decltype(read_cpu_times()){};
  // Without counters or affinity masks nothing is known: every rank of the node simulates.
  int active_on_node = ranks_on_node;
  double busy = 0;
  if (node_rank == 0 && !before.empty() && !after.empty() && !cpus.empty()) {
    for (const int cpu : cpus) {
      const auto b = before.find(cpu);
      const auto a = after.find(cpu);
      if (b == before.end() || a == after.end()) continue;
      const double total = static_cast<double>(a->second.second - b->second.second);
      if (total > 0) busy += static_cast<double>(a->second.first - b->second.first) / total;
    }
    active_on_node = active_ranks_for(static_cast<int>(cpus.size()), busy, ranks_on_node);
  }
  MPI_Bcast(&active_on_node, 1, MPI_INT, 0, node);
  MPI_Bcast(&busy, 1, MPI_DOUBLE, 0, node);
  const bool active = node_rank < active_on_node;
  MPI_Comm_free(&node);

  const int flag = active ? 1 : 0;
  int active_total = 0;
  MPI_Allreduce(&flag, &active_total, 1, MPI_INT, MPI_SUM, world_);
  MPI_Comm_split(world_, active ? 0 : MPI_UNDEFINED, world_rank, &comm_);
  if (active_total == world_size) return;
  std::vector<int> flags(world_rank == 0 ? static_cast<std::size_t>(world_size) : 0);
  MPI_Gather(&flag, 1, MPI_INT, flags.data(), 1, MPI_INT, 0, world_);
  for (int r = 0; r < static_cast<int>(flags.size()); ++r)
    if (flags[static_cast<std::size_t>(r)] == 0) waiting_.push_back(r);
  char line[320];
  std::snprintf(line, sizeof line,
                "this node's CPUs are shared: %.1f of the %d CPUs its %d ranks may use were busy with other "
                "processes, so %d of %d ranks simulate and the others wait (ranks without a CPU of their "
                "own slow a run down; --shared-node keep uses every rank)",
                busy, static_cast<int>(cpus.size()), ranks_on_node, active_total, world_size);
  note_ = line;
}

ActiveRanks::~ActiveRanks() {
  if (!released_) release(2);
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

int ActiveRanks::wait() {
  int code = 0;
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Irecv(&code, 1, MPI_INT, 0, kReleaseTag, world_, &request);
  // Polls every 2 ms while asleep: a blocking receive would spin in most MPI libraries, taking the CPU the
  // simulating ranks are short of.
  for (;;) {
    int done = 0;
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  released_ = true;
  return code;
}

void ActiveRanks::release(int exit_code) {
  if (released_) return;
  released_ = true;
  for (const int rank : waiting_) MPI_Send(&exit_code, 1, MPI_INT, rank, kReleaseTag, world_);
}

}  // namespace warpsim
