// The Time Warp engine: runs a Model over the ranks of an MPI communicator in one of three sync modes
// (sequential oracle, conservative windows, optimistic Time Warp) with identical results in all of them.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/lp_context.hpp"
#include "engine/model.hpp"

#include "engine/kernel/engine_config.hpp"
#include "engine/kernel/engine_stats.hpp"
#include "engine/kernel/event_pool.hpp"
#include "engine/kernel/local_index.hpp"
#include "engine/kernel/lp_map.hpp"
#include "engine/kernel/memory_guard.hpp"
#include "engine/kernel/mpi_transport.hpp"
#include "engine/kernel/optimism_control.hpp"
#include "engine/kernel/pending_queue.hpp"
#include "engine/kernel/processed_log.hpp"
#include "engine/kernel/remote_event_index.hpp"

namespace warpsim {

struct RunResult {
  EngineStats total;        // counters summed over ranks; peak_* and per-item sizes are maxima
  double wall_seconds = 0;  // slowest rank, from the start of init to the end of the run
  int ranks = 1;
  std::uint64_t state_digest = 0;         // order-independent combination of every LP's digest
  std::uint64_t peak_rss_bytes_max = 0;   // largest per-rank peak RSS
  std::uint64_t peak_rss_bytes_sum = 0;   // sum of per-rank peak RSS
  std::uint64_t memory_budget_bytes = 0;  // the per-rank budget the run was given (0 = none)
  SimTime final_gvt = 0;
  // Checkpoint/restart: checkpoints this run wrote, the newest one's directory and cut time, and whether
  // the run stopped there (LP finalize() not called; resume from checkpoint_path to finish it).
  std::uint64_t checkpoints_written = 0;
  std::string checkpoint_path;
  SimTime checkpoint_time = 0;
  bool stopped_at_checkpoint = false;
  SimTime resumed_from = 0;  // cut time of the checkpoint this run started from (0 = a fresh run)
  // Events committed before that checkpoint (included in total.committed); rates use only this run's.
  std::uint64_t resumed_committed = 0;
  // The smallest share of its wall time any rank spent on a CPU (user + system time / wall), and that rank.
  // Well below 1 means the node is shared (another process, or more ranks than cores): the ranks were
  // descheduled, which costs an optimistic run waits and rollbacks (docs/running.md, "Shared nodes").
  double cpu_share_min = 1.0;
  int cpu_share_min_rank = 0;
};

// Below this CPU share a multi-rank run warns that its node's cores are shared.
inline constexpr double kLowCpuShare = 0.8;

class Engine final : private EventScheduler {
 public:
  Engine(Model& model, const LpMap& map, const EngineConfig& config, MPI_Comm comm);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Collective over the communicator. Runs until no event below end_time remains anywhere.
  RunResult run();

  // After run(): (LP id, state digest) of this rank's LPs in increasing id order.
  std::vector<std::pair<LpId, std::uint64_t>> local_digests() const;
  const EngineStats& local_stats() const { return stats_; }
  int rank() const { return rank_; }

 private:
  struct LocalLp {
    std::uint32_t tail = kNil;      // newest processed, uncommitted event
    std::uint32_t uncommitted = 0;  // length of the processed list behind tail
    std::uint64_t next_seq = 0;     // sequence number of this LP's next send
    std::uint32_t slot = 0;         // slot in its type
    std::uint32_t type = 0;
  };
  struct SendRecord {
    std::uint32_t next;
    std::uint32_t target;  // pool index (local send) or destination LP (remote send)
    std::uint64_t order;   // kNil-free marker: remote sends keep the child's order here
    SimTime time;
    std::int32_t rank;  // -1 for local sends
  };

  // EventScheduler
  void schedule(LpId dst, SimTime delay, std::uint16_t kind, const void* payload, std::size_t bytes) override;

  void init_lps();
  void run_sequential();
  void run_conservative();
  void run_optimistic();

  // Shared pieces.
  void push_pending(std::uint32_t index);
  bool skip_cancelled_top();
  void prefetch_next();
  void execute_forward(std::uint32_t index, LocalLp& lp);
  void commit_and_release(std::uint32_t index, LocalLp& lp);
  void on_batch(std::uint32_t epoch, const std::byte* records, std::uint32_t count);
  void poll_network();
  void drain_network();

  // Optimistic machinery.
  void deliver_optimistic(std::uint32_t index);
  void rollback(std::uint32_t local, const EventKey& key, bool inclusive);
  void cancel_event(std::uint32_t index);
  void retract_sends(EventHeader& event, LocalLp& lp);
  void fossil_collect(SimTime gvt);
  bool can_process_optimistic();
  void start_gvt_round();
  void post_gvt_reduction();
  void progress_gvt_round();
  std::uint32_t allocate_record();
  void release_record(std::uint32_t r);

  // Checkpoint/restart (checkpoint.cpp).
  int local_checkpoint_request();  // 0 none, 1 checkpoint, 2 checkpoint and stop
  void decide_cut(SimTime cut, bool stop);
  void rollback_from(SimTime cut);
  std::string write_checkpoint(SimTime cut);
  void load_checkpoint();
  std::vector<std::pair<std::string, std::string>> checkpoint_identity();

  void report_progress(SimTime gvt, std::uint64_t committed_total, bool force);
  RunResult reduce_result(double wall_seconds, double cpu_seconds);  // cpu_seconds: this rank's, over the run

  Model& model_;
  const LpMap& map_;
  EngineConfig config_;
  MPI_Comm comm_;
  int rank_ = 0;
  int ranks_ = 1;
  SimTime lookahead_ = 0;

  EventPool pool_;
  PendingQueue pending_;
  std::vector<LocalLp> lps_;
  std::vector<LpId> lp_ids_;
  LocalIndex index_;
  std::vector<LpType*> types_;
  LpContext ctx_;
  std::unique_ptr<MpiTransport> transport_;
  std::vector<std::byte> scratch_;  // one wire record

  // The event whose forward handler is running (schedule() reads these).
  std::uint32_t current_local_ = 0;
  std::uint32_t current_event_ = kNil;  // kNil during init: init sends are never retracted
  SimTime current_time_ = 0;
  std::uint64_t current_generation_ = 0;
  bool in_reverse_ = false;

  // Optimistic state.
  std::vector<SendRecord> records_;
  std::uint32_t free_record_ = kNil;
  ProcessedLog processed_log_;
  std::uint32_t stamp_ = 0;
  RemoteEventIndex remote_index_;
  std::uint64_t uncommitted_ = 0;
  std::uint64_t max_uncommitted_ = 0;
  MemoryGuard memory_guard_;                               // --memory-budget: sets and cuts max_uncommitted_
  OptimismControl optimism_{OptimismControl::Settings{}};  // the adaptive window beyond GVT
  std::uint32_t idle_sleep_us_ = 0;                        // resolved from config_.idle_sleep_us (0 = spin)
  std::chrono::nanoseconds poll_period_{0};  // resolved from config_.poll_us (0 = by event count only)
  SimTime gvt_ = 0;
  bool done_ = false;

  // GVT (Mattern-style two colours via epochs, reduced with non-blocking collectives).
  std::uint32_t epoch_ = 0;
  bool in_round_ = false;
  bool want_round_ = false;
  std::uint64_t processed_since_round_ = 0;
  std::chrono::steady_clock::time_point last_round_end_{};  // when this rank's last GVT round completed
  bool throttled_ = false;  // the last can_process_optimistic() said no because of a throttle
  // Wall time at least between GVT rounds that an idle rank starts (optimistic.cpp, run_optimistic).
  static constexpr std::chrono::microseconds kIdleRoundGap{500};
  std::uint64_t white_sent_ = 0;
  std::uint64_t white_received_ = 0;
  std::uint64_t future_received_[4] = {0, 0, 0, 0};
  SimTime red_min_ = kTimeInfinity;
  // Sums: white sent, white received, committed, checkpoint requests, stop requests.
  std::uint64_t sums_in_[5] = {0, 0, 0, 0, 0};
  std::uint64_t sums_out_[5] = {0, 0, 0, 0, 0};
  // Minima: the GVT candidate, and infinity - the furthest time executed (a maximum, for choosing a cut).
  std::uint64_t min_in_[2] = {0, 0};
  std::uint64_t min_out_[2] = {0, 0};
  MPI_Request requests_[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};

  // Checkpoint/restart. Every kernel runs events below stop_time_ only: end_time, or a cut (a planned
  // checkpoint time, or one the ranks agreed on after a request), where everything below is committed.
  SimTime stop_time_ = 0;
  SimTime resumed_from_ = 0;
  std::uint64_t resumed_committed_ = 0;  // summed over ranks
  SimTime cut_base_ = 0;      // the last cut (or the resumed checkpoint's); later cuts are never below it
  SimTime max_executed_ = 0;  // furthest event time this rank has executed forward
  bool checkpointing_ = false;
  bool stop_after_cut_ = false;
  std::uint64_t loaded_peak_events_ = 0;
  std::chrono::steady_clock::time_point last_checkpoint_;

  EngineStats stats_;
  // Where this rank's wall time went in the optimistic kernel (seconds): waiting with nothing it may run,
  // in the network (flush, poll, GVT reductions) and in fossil collection. Busy = wall - these.
  struct TimeProfile {
    double idle = 0, network = 0, fossil = 0;
    std::uint64_t idle_spells = 0;
  } profile_;
  std::chrono::steady_clock::time_point start_;
  double start_cpu_seconds_ = 0;  // process CPU time at start_
  std::chrono::steady_clock::time_point last_progress_;
  bool ran_ = false;
};

}  // namespace warpsim
