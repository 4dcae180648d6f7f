// Engine set-up, event scheduling, the sequential kernel, and the result reduction.
#include "engine/kernel/engine.hpp"

#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "engine/hash.hpp"
#include "engine/kernel/process_cpu.hpp"
#include "engine/kernel/process_memory.hpp"

namespace warpsim {

std::optional<SyncMode> parse_sync_mode(std::string_view text) {
  if (text == "sequential") return SyncMode::kSequential;
  if (text == "conservative") return SyncMode::kConservative;
  if (text == "optimistic") return SyncMode::kOptimistic;
  return std::nullopt;
}

std::string_view to_string(SyncMode mode) {
  switch (mode) {
    case SyncMode::kSequential:
      return "sequential";
    case SyncMode::kConservative:
      return "conservative";
    case SyncMode::kOptimistic:
      return "optimistic";
  }
  return "unknown";
}

namespace {
// Whether the node this rank runs on hosts more ranks of `comm` than it has online CPUs.
bool node_oversubscribed(MPI_Comm comm) {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int on_node = 1;
  MPI_Comm_size(node, &on_node);
  MPI_Comm_free(&node);
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  return cpus > 0 && on_node > cpus;
}
}  // namespace

std::optional<ConfigProblem> check_config(const EngineConfig& config, int ranks) {
  if (config.sync == SyncMode::kSequential && ranks != 1) {
    return ConfigProblem{ConfigSetting::kSync, "runs on exactly 1 rank (got " + std::to_string(ranks) +
                                                   "); use conservative or optimistic for more"};
  }
  if (config.end_time == 0) return ConfigProblem{ConfigSetting::kEndTime, "end time must be > 0"};
  return std::nullopt;
}

Engine::Engine(Model& model, const LpMap& map, const EngineConfig& config, MPI_Comm comm)
    : model_(model),
      map_(map),
      config_(config),
      comm_(comm),
      pool_(model.payload_bytes()),
      ctx_(*this, model.payload_bytes()) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &ranks_);
  if (map_.rank_count() != ranks_) {
    throw std::invalid_argument("partition has " + std::to_string(map_.rank_count()) +
                                " ranks but the run has " + std::to_string(ranks_));
  }
  if (const auto problem = check_config(config_, ranks_)) {
    throw std::invalid_argument(problem->setting == ConfigSetting::kSync
                                    ? "sync mode '" + std::string(to_string(config_.sync)) + "' " +
                                          problem->message
                                    : problem->message);
  }
  // One rank has no peer to wait for or be rolled back by: the optimistic kernel would only add its state
  // saving, logs and GVT rounds (1.24x the sequential wall time on the default experiment, measured
  // 2026-12-06). The sequential kernel commits the same events in the same order, so results are unchanged.
  if (ranks_ == 1 && config_.sync == SyncMode::kOptimistic) {
    spdlog::debug("optimistic sync on 1 rank: running the sequential kernel");
    config_.sync = SyncMode::kSequential;
  }
  lookahead_ = model_.lookahead();
  if (config_.sync == SyncMode::kConservative && lookahead_ == 0) {
    throw std::invalid_argument("the conservative mode needs a model lookahead > 0");
  }
  const bool oversubscribed =
      config_.sync == SyncMode::kOptimistic && ranks_ > 1 && node_oversubscribed(comm_);
  max_uncommitted_ = uncommitted_limit(config_);
  memory_guard_ = MemoryGuard(config_.memory_budget_bytes);
  {
    const bool adaptive = config_.optimism_control == OptimismControlMode::kAdaptive ||
                          (config_.optimism_control == OptimismControlMode::kAuto && oversubscribed);
    // Judge the rollback share over at least a quarter of a GVT interval's events.
    optimism_ = OptimismControl(OptimismControl::Settings{
        config_.rollback_target, adaptive, std::max<std::uint64_t>(1, config_.gvt_interval / 4)});
  }
  if (config_.idle_sleep_us >= 0)
    idle_sleep_us_ = static_cast<std::uint32_t>(config_.idle_sleep_us);
  else if (oversubscribed)
    idle_sleep_us_ = 50;
  if (config_.poll_us >= 0)
    poll_period_ = std::chrono::microseconds(config_.poll_us);
  else if (oversubscribed)
    poll_period_ = std::chrono::microseconds(100);
  scratch_.resize(pool_.stride());
  transport_ = std::make_unique<MpiTransport>(comm_, pool_.stride(), config_.batch);

  lp_ids_ = map_.lps_of(rank_);
  index_.build(lp_ids_);
  for (std::size_t t = 0; t < model_.type_count(); ++t) types_.push_back(&model_.type(t));
  lps_.resize(lp_ids_.size());
  for (std::size_t i = 0; i < lp_ids_.size(); ++i) {
    const LpId id = lp_ids_[i];
    if (id >= model_.lp_count())
      throw std::invalid_argument("partition names LP " + std::to_string(id) + " beyond the model");
    const auto type = model_.type_of(id);
    lps_[i].type = static_cast<std::uint32_t>(type);
    lps_[i].slot = types_[type]->add_lp(id);
    stats_.model_state_bytes += types_[type]->state_bytes();
  }
  stats_.local_lps = lps_.size();
  checkpointing_ = config_.checkpoint.writes();
  if (checkpointing_ || !config_.checkpoint.resume.empty()) {
    // Every rank checks every type (not only its own LPs'), so that all ranks refuse alike.
    for (const LpType* type : types_) {
      if (!type->checkpointable())
        throw CheckpointError("checkpoint not supported by LP type '" + std::string(type->name()) + "'");
    }
  }
  stats_.event_bytes = pool_.stride();
  stats_.lp_bytes = sizeof(LocalLp) + sizeof(LpId);
}

Engine::~Engine() = default;

void Engine::schedule(LpId dst, SimTime delay, std::uint16_t kind, const void* payload, std::size_t bytes) {
  if (in_reverse_) throw std::logic_error("reverse handlers must not send events");
  if (bytes > pool_.payload_bytes())
    throw std::logic_error("event payload larger than the model's payload_bytes()");
  if (dst >= model_.lp_count())
    throw std::out_of_range("send to LP " + std::to_string(dst) + " beyond the model");
  LocalLp& lp = lps_[current_local_];
  const LpId self = lp_ids_[current_local_];
  if (config_.sync == SyncMode::kConservative && dst != self && delay < lookahead_) {
    throw std::logic_error("LP " + std::to_string(self) + " sent to LP " + std::to_string(dst) +
                           " with delay " + std::to_string(delay) + " ps, below the model's lookahead of " +
                           std::to_string(lookahead_) + " ps");
  }
  const SimTime time = delay > kTimeInfinity - current_time_ ? kTimeInfinity : current_time_ + delay;
  const std::uint64_t generation = (time == current_time_) ? current_generation_ + 1 : 0;
  if (generation > kMaxGeneration) throw std::overflow_error("more than 65535 chained zero-delay events");
  const std::uint64_t order = make_order(generation, lp.next_seq++);

  const int dst_rank = ranks_ == 1 ? 0 : map_.rank_of(dst);
  const bool track = config_.sync == SyncMode::kOptimistic && current_event_ != kNil;
  if (dst_rank == rank_) {
    const std::uint32_t index = pool_.allocate();
    EventHeader& e = pool_.at(index);
    e = EventHeader{time, order, self, dst, kNil, kNil, kNil, kind, EventState::kPending, 0};
    if (bytes) std::memcpy(e.payload(), payload, bytes);
    if (bytes < pool_.payload_bytes()) std::memset(e.payload() + bytes, 0, pool_.payload_bytes() - bytes);
    if (track) {
      const std::uint32_t r = allocate_record();
      records_[r] = SendRecord{pool_.at(current_event_).sends, index, order, time, -1};
      pool_.at(current_event_).sends = r;
    }
    if (config_.sync == SyncMode::kOptimistic) {
      deliver_optimistic(index);
    } else {
      push_pending(index);
    }
  } else {
    auto* e = reinterpret_cast<EventHeader*>(scratch_.data());
    *e = EventHeader{time, order, self, dst, kNil, kNil, kNil, kind, EventState::kPending, 0};
    if (bytes) std::memcpy(e->payload(), payload, bytes);
    if (bytes < pool_.payload_bytes()) std::memset(e->payload() + bytes, 0, pool_.payload_bytes() - bytes);
    transport_->push(dst_rank, scratch_.data(), epoch_);
    ++stats_.remote_sent;
    if (in_round_) red_min_ = std::min(red_min_, time);
    if (track) {
      const std::uint32_t r = allocate_record();
      records_[r] = SendRecord{pool_.at(current_event_).sends, dst, order, time, dst_rank};
      pool_.at(current_event_).sends = r;
    }
  }
}

void Engine::push_pending(std::uint32_t index) {
  const EventHeader& e = pool_.at(index);
  pending_.push(PendingEntry{e.time, e.order, e.src, index, e.dst});
}

void Engine::prefetch_next() {
  const PendingEntry& next = pending_.top();
  __builtin_prefetch(&pool_.at(next.index));
  __builtin_prefetch(&lps_[index_.find(next.dst)]);
}

bool Engine::skip_cancelled_top() {
  while (!pending_.empty()) {
    const std::uint32_t index = pending_.top().index;
    if (pool_.at(index).state != EventState::kCancelled) return true;
    pending_.pop();
    pool_.release(index);
  }
  return false;
}

void Engine::execute_forward(std::uint32_t index, LocalLp& lp) {
  EventHeader& e = pool_.at(index);
  current_local_ = static_cast<std::uint32_t>(&lp - lps_.data());
  current_time_ = e.time;
  current_generation_ = generation_of(e.order);
  ctx_.bind(e.dst, e.time, e.key(), e.kind, e.payload(), config_.seed);
  types_[lp.type]->forward(lp.slot, ctx_);
  ++stats_.processed;
  max_executed_ = std::max(max_executed_, e.time);
}

void Engine::commit_and_release(std::uint32_t index, LocalLp& lp) {
  EventHeader& e = pool_.at(index);
  LpContext ctx(*this, pool_.payload_bytes());
  ctx.bind(e.dst, e.time, e.key(), e.kind, e.payload(), config_.seed);
  types_[lp.type]->commit(lp.slot, ctx);
  if (e.flags & kFlagFromRemote) ++stats_.committed_remote;
  pool_.release(index);
  ++stats_.committed;
}

void Engine::init_lps() {
  for (std::uint32_t local = 0; local < lps_.size(); ++local) {
    current_local_ = local;
    current_event_ = kNil;
    current_time_ = 0;
    current_generation_ = 0;
    // Init draws from a stream no event can have (order = all ones).
    ctx_.bind(lp_ids_[local], 0, EventKey{0, ~std::uint64_t{0}, lp_ids_[local]}, 0, nullptr, config_.seed);
    types_[lps_[local].type]->init(lps_[local].slot, ctx_);
  }
}

void Engine::run_sequential() {
  std::uint64_t until_clock_check = 1u << 16;
  std::uint32_t until_request_check = 256;
  while (!pending_.empty()) {
    const PendingEntry top = pending_.top();
    if (top.time >= stop_time_) break;
    if (checkpointing_ && --until_request_check == 0) {
      until_request_check = 256;
      // One rank: the cut just after the furthest event executed leaves nothing half done.
      if (const int request = local_checkpoint_request()) {
        decide_cut(max_executed_ + 1, request >= 2);
        if (top.time >= stop_time_) break;
      }
    }
    pending_.pop();
    // The next event was written long ago: start its cache miss now, while this one runs.
    if (!pending_.empty()) prefetch_next();
    LocalLp& lp = lps_[index_.find(top.dst)];
    execute_forward(top.index, lp);
    commit_and_release(top.index, lp);
    if (--until_clock_check == 0) {
      until_clock_check = 1u << 16;
      report_progress(top.time, stats_.committed, false);
    }
  }
}

RunResult Engine::run() {
  if (ran_) throw std::logic_error("Engine::run() may be called once");
  ran_ = true;
  MPI_Barrier(comm_);
  start_ = std::chrono::steady_clock::now();
  start_cpu_seconds_ = process_cpu_seconds();
  last_progress_ = start_;
  last_checkpoint_ = start_;
  if (config_.checkpoint.resume.empty()) {
    init_lps();
  } else {
    load_checkpoint();
  }
  // The next stop: the planned checkpoint time while it is ahead, else the end.
  const auto next_stop = [this] {
    const SimTime at = config_.checkpoint.at;
    return checkpointing_ && at > cut_base_ && at < config_.end_time ? at : config_.end_time;
  };
  stop_time_ = next_stop();
  if (config_.sync == SyncMode::kOptimistic && memory_guard_.active()) {
    // The LPs exist now: what is left of the budget is what speculation may use.
    const std::uint64_t resident = resident_bytes_now();
    max_uncommitted_ =
        memory_guard_.initial_limit(max_uncommitted_, std::max(resident, config_.memory_expected_bytes));
    spdlog::debug(
        "memory budget {} B, resident {} B at the start, {} B expected: at most {} uncommitted events",
        config_.memory_budget_bytes, resident, config_.memory_expected_bytes, max_uncommitted_);
  }
  std::uint64_t written = 0;
  std::string last_path;
  bool stopped = false;
  // One phase per checkpoint: each kernel runs until everything below stop_time_ is committed.
  for (;;) {
    done_ = false;
    switch (config_.sync) {
      case SyncMode::kSequential:
        run_sequential();
        break;
      case SyncMode::kConservative:
        run_conservative();
        break;
      case SyncMode::kOptimistic:
        run_optimistic();
        break;
    }
    const SimTime cut = stop_time_;
    if (cut >= config_.end_time) break;
    last_path = write_checkpoint(cut);
    ++written;
    cut_base_ = cut;
    last_checkpoint_ = std::chrono::steady_clock::now();
    if (stop_after_cut_ || config_.checkpoint.stop_after_first) {
      stopped = true;
      break;
    }
    stop_time_ = next_stop();
  }
  // A run stopped at a checkpoint is not over: its LPs are finalized by the run that resumes it.
  if (!stopped) {
    for (std::uint32_t local = 0; local < lps_.size(); ++local)
      types_[lps_[local].type]->finalize(lps_[local].slot);
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  stats_.peak_events = std::max<std::uint64_t>(pool_.peak_live(), loaded_peak_events_);
  spdlog::debug("memory: pool {} B, pending queue {} B, records {} B, log {} B", pool_.reserved_bytes(),
                pending_.capacity_bytes(), records_.capacity() * sizeof(SendRecord),
                processed_log_.capacity_bytes());
  if (config_.sync == SyncMode::kOptimistic)
    spdlog::debug("optimism control: window {} ps (smallest {}), {} shrinks, {} grows, {} throttle waits",
                  optimism_.window(), optimism_.min_window(), optimism_.shrinks(), optimism_.grows(),
                  stats_.throttle_waits);
  const double cpu_seconds = process_cpu_seconds() - start_cpu_seconds_;
  if (config_.sync == SyncMode::kOptimistic && ranks_ > 1) {
    // Per rank, so that an imbalance or a rank that spends its time waiting shows (--log-level debug).
    spdlog::debug(
        "rank {} profile: {} lps, committed {}, processed {}, rolled back {}, wall {:.3f} s, idle {:.3f} s "
        "in {} "
        "spells, network while busy {:.3f} s, fossil collection {:.3f} s, throttle waits {}, gvt rounds {}, "
        "cpu {:.3f} s",
        rank_, lps_.size(), stats_.committed, stats_.processed, stats_.rolled_back, wall, profile_.idle,
        profile_.idle_spells, profile_.network, profile_.fossil, stats_.throttle_waits, stats_.gvt_rounds,
        cpu_seconds);
  }
  stats_.memory_cuts = memory_guard_.cuts();
  RunResult result = reduce_result(wall, cpu_seconds);
  result.memory_budget_bytes = config_.memory_budget_bytes;
  if (rank_ == 0 && result.memory_budget_bytes != 0 &&
      result.peak_rss_bytes_max > result.memory_budget_bytes) {
    spdlog::warn(
        "a rank peaked at {:.1f} MiB, above the memory budget of {:.1f} MiB per rank ({} bytes): its "
        "share of the model (and of the results file's series) does not fit; more ranks, or no --output, "
        "lower it (docs/running.md, 'Memory budget')",
        static_cast<double>(result.peak_rss_bytes_max) / 1048576.0,
        static_cast<double>(result.memory_budget_bytes) / 1048576.0, result.memory_budget_bytes);
  }
  // A descheduled rank is the commonest reason why more ranks run slower than one: say so, with the figure.
  if (rank_ == 0 && ranks_ > 1 && wall > 1.0 && result.cpu_share_min < kLowCpuShare) {
    spdlog::warn(
        "rank {} was on a CPU only {:.0f}% of the run's wall time: this node's cores are shared (another "
        "process, or more ranks than cores), so ranks waited for descheduled peers and rolled back; fewer "
        "ranks, or a node to itself, is faster (docs/running.md, 'Shared nodes')",
        result.cpu_share_min_rank, 100.0 * result.cpu_share_min);
  }
  result.checkpoints_written = written;
  result.checkpoint_path = last_path;
  result.checkpoint_time = written != 0 ? cut_base_ : 0;
  result.stopped_at_checkpoint = stopped;
  result.resumed_from = config_.checkpoint.resume.empty() ? 0 : resumed_from_;
  result.resumed_committed = resumed_committed_;
  return result;
}

void Engine::report_progress(SimTime gvt, std::uint64_t committed_total, bool force) {
  if (rank_ != 0 || config_.progress_seconds <= 0) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && std::chrono::duration<double>(now - last_progress_).count() < config_.progress_seconds)
    return;
  last_progress_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double by_time = static_cast<double>(gvt) / static_cast<double>(config_.end_time);
  const double done = std::clamp(config_.progress_fraction ? config_.progress_fraction() : by_time, 0.0, 1.0);
  const double eta = done > 0 ? elapsed * (1.0 - done) / done : 0.0;
  // GVT is the simulated time every rank has committed up to (the sequential run's clock).
  spdlog::info("progress: gvt {:.6g} s, {:.1f}% done, committed {} events, {:.3g} events/s, eta {:.0f} s",
               static_cast<double>(gvt) / static_cast<double>(kPicosPerSecond), 100.0 * done, committed_total,
               elapsed > 0 ? static_cast<double>(committed_total - resumed_committed_) / elapsed : 0.0, eta);
}

std::vector<std::pair<LpId, std::uint64_t>> Engine::local_digests() const {
  std::vector<std::pair<LpId, std::uint64_t>> out;
  out.reserve(lps_.size());
  for (std::uint32_t local = 0; local < lps_.size(); ++local) {
    out.emplace_back(lp_ids_[local], types_[lps_[local].type]->digest(lps_[local].slot));
  }
  return out;
}

RunResult Engine::reduce_result(double wall_seconds, double cpu_seconds) {
  RunResult result;
  result.ranks = ranks_;
  std::uint64_t digest = 0;
  for (const auto& [lp, d] : local_digests()) digest += splitmix64_finalize(splitmix64_finalize(lp) ^ d);

  const EngineStats& s = stats_;
  std::uint64_t sums[] = {s.committed,      s.processed,         s.rolled_back, s.rollbacks,
                          s.remote_sent,    s.anti_sent,         s.annihilated, s.mpi_messages,
                          s.throttle_waits, s.model_state_bytes, s.local_lps,   digest,
                          peak_rss_bytes(), s.committed_remote,  s.memory_cuts};
  std::uint64_t maxima[] = {s.peak_uncommitted, s.peak_events,    s.event_bytes,
                            s.lp_bytes,         peak_rss_bytes(), s.gvt_rounds};
  MPI_Allreduce(MPI_IN_PLACE, sums, std::size(sums), MPI_UINT64_T, MPI_SUM, comm_);
  MPI_Allreduce(MPI_IN_PLACE, maxima, std::size(maxima), MPI_UINT64_T, MPI_MAX, comm_);
  double wall = wall_seconds;
  MPI_Allreduce(MPI_IN_PLACE, &wall, 1, MPI_DOUBLE, MPI_MAX, comm_);
  struct {
    double share;
    int rank;
  } cpu_share{wall_seconds > 0 ? std::min(1.0, cpu_seconds / wall_seconds) : 1.0, rank_};
  MPI_Allreduce(MPI_IN_PLACE, &cpu_share, 1, MPI_DOUBLE_INT, MPI_MINLOC, comm_);
  result.cpu_share_min = cpu_share.share;
  result.cpu_share_min_rank = cpu_share.rank;

  EngineStats& t = result.total;
  t.committed = sums[0];
  t.processed = sums[1];
  t.rolled_back = sums[2];
  t.rollbacks = sums[3];
  t.remote_sent = sums[4];
  t.anti_sent = sums[5];
  t.annihilated = sums[6];
  t.mpi_messages = sums[7];
  t.throttle_waits = sums[8];
  t.model_state_bytes = sums[9];
  t.local_lps = sums[10];
  result.state_digest = sums[11];
  result.peak_rss_bytes_sum = sums[12];
  t.peak_uncommitted = maxima[0];
  t.peak_events = maxima[1];
  t.committed_remote = sums[13];
  t.memory_cuts = sums[14];
  t.event_bytes = maxima[2];
  t.lp_bytes = maxima[3];
  result.peak_rss_bytes_max = maxima[4];
  t.gvt_rounds = maxima[5];
  result.wall_seconds = wall;
  result.final_gvt = gvt_;
  return result;
}

}  // namespace warpsim
