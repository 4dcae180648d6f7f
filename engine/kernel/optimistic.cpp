// The optimistic (Time Warp) kernel: straggler rollback by reverse computation, anti-messages and their
// annihilation, fossil collection through commit handlers, and the (adaptive) optimism throttle.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

#include "engine/kernel/engine.hpp"

namespace warpsim {

std::uint32_t Engine::allocate_record() {
  if (free_record_ != kNil) {
    const std::uint32_t r = free_record_;
    free_record_ = records_[r].next;
    return r;
  }
  records_.push_back(SendRecord{});
  return static_cast<std::uint32_t>(records_.size() - 1);
}

void Engine::release_record(std::uint32_t r) {
  records_[r].next = free_record_;
  free_record_ = r;
}

void Engine::deliver_optimistic(std::uint32_t index) {
  const EventHeader& e = pool_.at(index);
  const std::uint32_t local = index_.find(e.dst);
  const LocalLp& lp = lps_[local];
  if (lp.tail != kNil && e.key() < pool_.at(lp.tail).key()) rollback(local, e.key(), /*inclusive=*/false);
  push_pending(index);
}

// Undo, newest first, every processed event of LP `local` whose key is > key (>= key when inclusive).
void Engine::rollback(std::uint32_t local, const EventKey& key, bool inclusive) {
  LocalLp& lp = lps_[local];
  LpContext ctx(*this, pool_.payload_bytes());
  bool any = false;
  while (lp.tail != kNil) {
    const std::uint32_t index = lp.tail;
    EventHeader& e = pool_.at(index);
    const EventKey k = e.key();
    if (k < key || (!inclusive && k == key)) break;
    any = true;
    lp.tail = --lp.uncommitted == 0 ? kNil : e.prev;
    ctx.bind(e.dst, e.time, k, e.kind, e.payload(), config_.seed);
    in_reverse_ = true;
    types_[lp.type]->reverse(lp.slot, ctx);
    in_reverse_ = false;
    retract_sends(e, lp);
    e.state = EventState::kPending;
    e.prev = kNil;
    push_pending(index);
    --uncommitted_;
    ++stats_.rolled_back;
  }
  if (any) ++stats_.rollbacks;
}

void Engine::retract_sends(EventHeader& event, LocalLp& lp) {
  std::uint32_t r = event.sends;
  event.sends = kNil;
  while (r != kNil) {
    const SendRecord record = records_[r];
    release_record(r);
    if (record.rank < 0) {
      cancel_event(record.target);
    } else {
      auto* anti = reinterpret_cast<EventHeader*>(scratch_.data());
      std::memset(scratch_.data(), 0, scratch_.size());
      *anti = EventHeader{record.time, record.order, event.dst, record.target,        kNil,
                          kNil,        kNil,         0,         EventState::kPending, kFlagAnti};
      transport_->push(record.rank, scratch_.data(), epoch_);
      if (in_round_) red_min_ = std::min(red_min_, record.time);
      ++stats_.anti_sent;
    }
    --lp.next_seq;
    r = record.next;
  }
}

// Removes an event that its sender retracted. A processed one is first rolled back (with its successors).
void Engine::cancel_event(std::uint32_t index) {
  EventHeader& e = pool_.at(index);
  if (e.state == EventState::kProcessed) rollback(index_.find(e.dst), e.key(), /*inclusive=*/true);
  if (e.state != EventState::kPending) throw std::logic_error("cancel of an event that is not pending");
  if (e.flags & kFlagRemoteOrigin) remote_index_.erase(e.src, e.order);
  e.state = EventState::kCancelled;  // its heap entry frees it when it surfaces
  ++stats_.annihilated;
}

void Engine::on_batch(std::uint32_t epoch, const std::byte* records, std::uint32_t count) {
  if (epoch < epoch_) {
    ++white_received_;
  } else {
    ++future_received_[epoch & 3];
    if (epoch > epoch_) want_round_ = true;  // another rank has started the next GVT round
  }
  const std::size_t stride = pool_.stride();
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::byte* rec = records + i * stride;
    EventHeader wire;
    std::memcpy(&wire, rec, sizeof wire);
    if (wire.flags & kFlagAnti) {
      const std::uint32_t index = remote_index_.find(wire.src, wire.order);
      if (index == kNil) {
        throw std::logic_error("anti-message for unknown event from LP " + std::to_string(wire.src));
      }
      cancel_event(index);
      continue;
    }
    const std::uint32_t index = pool_.allocate();
    EventHeader& e = pool_.at(index);
    std::memcpy(&e, rec, stride);
    e.next = e.prev = e.sends = kNil;
    e.state = EventState::kPending;
    if (config_.sync == SyncMode::kOptimistic) {
      e.flags = kFlagRemoteOrigin | kFlagFromRemote;
      remote_index_.insert(e.src, e.order, index);
      deliver_optimistic(index);
    } else {
      e.flags = kFlagFromRemote;
      push_pending(index);
    }
  }
}

void Engine::poll_network() {
  if (ranks_ == 1) return;
  transport_->flush_all(epoch_);
  transport_->poll([this](std::uint32_t epoch, const std::byte* records, std::uint32_t count) {
    on_batch(epoch, records, count);
  });
}

void Engine::fossil_collect(SimTime gvt) {
  // The events committed here ran long ago (their slots, send records and LP entries are out of cache):
  // prefetch in two stages, first an event's slot, then, once it has arrived, what it points at.
  const auto prefetch_slot = [this](const ProcessedLog::Entry& ahead) {
    const auto* slot = reinterpret_cast<const char*>(&pool_.at(ahead.index));
    __builtin_prefetch(slot);
    __builtin_prefetch(slot + 64);  // the rest of the payload: slots straddle lines
  };
  const auto prefetch_targets = [this](const ProcessedLog::Entry& ahead) {
    const EventHeader& e = pool_.at(ahead.index);
    if (e.state != EventState::kProcessed) return;  // rolled back since: skipped below
    if (e.sends != kNil) __builtin_prefetch(&records_[e.sends]);
    __builtin_prefetch(&lps_[index_.find(e.dst)]);
  };
  processed_log_.collect(gvt, prefetch_slot, prefetch_targets, [this](const ProcessedLog::Entry& entry) {
    EventHeader& e = pool_.at(entry.index);
    if (e.state != EventState::kProcessed || e.next != entry.stamp) return;  // rolled back since
    // Log order is processing order, so each LP's committable events surface oldest first.
    LocalLp& lp = lps_[index_.find(e.dst)];
    if (--lp.uncommitted == 0) lp.tail = kNil;
    for (std::uint32_t r = e.sends; r != kNil;) {
      const std::uint32_t next = records_[r].next;
      release_record(r);
      r = next;
    }
    if (e.flags & kFlagRemoteOrigin) remote_index_.erase(e.src, e.order);
    --uncommitted_;
    commit_and_release(entry.index, lp);
  });
}

bool Engine::can_process_optimistic() {
  throttled_ = false;
  if (!skip_cancelled_top()) return false;
  const SimTime t = pending_.top().time;
  if (t >= stop_time_) return false;
  // Events at GVT itself always run: that is what lets GVT advance when every rank is at its limit.
  if (t <= gvt_) return true;
  if (uncommitted_ >= max_uncommitted_ ||
      (config_.optimism_window != kTimeInfinity && t - gvt_ > config_.optimism_window)) {
    ++stats_.throttle_waits;
    throttled_ = true;
    return false;
  }
  if (t - gvt_ > optimism_.window()) {
    optimism_.note_throttled();
    ++stats_.throttle_waits;
    throttled_ = true;
    return false;
  }
  return true;
}

void Engine::start_gvt_round() {
  transport_->flush_all(epoch_);
  white_sent_ = transport_->batches_sent();
  ++epoch_;
  white_received_ += future_received_[(epoch_ - 1) & 3];
  future_received_[(epoch_ - 1) & 3] = 0;
  red_min_ = kTimeInfinity;
  in_round_ = true;
  want_round_ = false;
  processed_since_round_ = 0;
  post_gvt_reduction();
}

void Engine::post_gvt_reduction() {
  SimTime local_min = skip_cancelled_top() ? pending_.top().time : kTimeInfinity;
  sums_in_[0] = white_sent_;
  sums_in_[1] = white_received_;
  sums_in_[2] = stats_.committed;
  const int request = local_checkpoint_request();
  sums_in_[3] = request >= 1 ? 1 : 0;
  sums_in_[4] = request >= 2 ? 1 : 0;
  min_in_[0] = std::min(local_min, red_min_);
  min_in_[1] = kTimeInfinity - max_executed_;
  MPI_Iallreduce(sums_in_, sums_out_, 5, MPI_UINT64_T, MPI_SUM, comm_, &requests_[0]);
  MPI_Iallreduce(min_in_, min_out_, 2, MPI_UINT64_T, MPI_MIN, comm_, &requests_[1]);
}

void Engine::progress_gvt_round() {
  int complete = 0;
  MPI_Testall(2, requests_, &complete, MPI_STATUSES_IGNORE);
  if (!complete) return;
  if (sums_out_[0] != sums_out_[1]) {  // white messages still in flight: measure again
    post_gvt_reduction();
    return;
  }
  in_round_ = false;
  last_round_end_ = std::chrono::steady_clock::now();
  ++stats_.gvt_rounds;
  if (min_out_[0] < gvt_) throw std::logic_error("GVT went backwards");
  gvt_ = min_out_[0];
  if (sums_out_[3] != 0) {
    // A checkpoint was asked for: cut just beyond the furthest event any rank has executed (few
    // rollbacks), and never below GVT (events below it may already be committed).
    const SimTime furthest = kTimeInfinity - min_out_[1];
    decide_cut(std::max(furthest == kTimeInfinity ? furthest : furthest + 1, gvt_), sums_out_[4] != 0);
  }
  const auto fossil_start = std::chrono::steady_clock::now();
  fossil_collect(std::min(gvt_, stop_time_));
  profile_.fossil += std::chrono::duration<double>(std::chrono::steady_clock::now() - fossil_start).count();
  optimism_.on_gvt(stats_.processed, stats_.rolled_back, max_executed_ > gvt_ ? max_executed_ - gvt_ : 0);
  max_uncommitted_ = memory_guard_.on_gvt(max_uncommitted_);
  if (gvt_ >= stop_time_) done_ = true;
  report_progress(std::min(gvt_, config_.end_time), sums_out_[2], false);
}

void Engine::drain_network() {
  // After the last GVT round only events at or beyond end_time can still be in flight. Receive them so
  // no message outlives the run.
  transport_->flush_all(epoch_);
  for (;;) {
    transport_->poll([this](std::uint32_t epoch, const std::byte* records, std::uint32_t count) {
      on_batch(epoch, records, count);
    });
    std::uint64_t counts[2] = {transport_->batches_sent(), transport_->batches_received()};
    MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_UINT64_T, MPI_SUM, comm_);
    if (counts[0] == counts[1]) break;
  }
  transport_->complete_sends();
}

void Engine::run_optimistic() {
  // Idle loops in a row before an idle rank starts sleeping between polls (a few, so that a message that is
  // about to arrive is not delayed by a sleep).
  constexpr std::uint32_t kIdleLoopsBeforeSleep = 4;
  std::uint32_t until_poll = config_.poll_interval;
  std::uint32_t idle_loops = 0;
  using Clock = std::chrono::steady_clock;
  auto last_poll = Clock::now();
  Clock::time_point idle_start{};  // set while the rank has nothing it may run
  while (!done_) {
    if (can_process_optimistic()) {
      if (idle_loops != 0) {
        profile_.idle += std::chrono::duration<double>(Clock::now() - idle_start).count();
        idle_loops = 0;
      }
      const std::uint32_t index = pending_.top().index;
      const LpId dst = pending_.top().dst;
      pending_.pop();
      if (!pending_.empty()) prefetch_next();
      EventHeader& e = pool_.at(index);
      LocalLp& lp = lps_[index_.find(dst)];
      e.state = EventState::kProcessed;
      e.prev = lp.tail;
      e.next = ++stamp_;
      e.sends = kNil;
      lp.tail = index;
      ++lp.uncommitted;
      processed_log_.push(ProcessedLog::Entry{index, stamp_, e.time});
      current_event_ = index;
      execute_forward(index, lp);
      current_event_ = kNil;
      stats_.peak_uncommitted = std::max(stats_.peak_uncommitted, ++uncommitted_);
      if (++processed_since_round_ >= config_.gvt_interval && !in_round_) start_gvt_round();
      if (--until_poll != 0) continue;
      if (poll_period_.count() != 0) {
        const auto now = std::chrono::steady_clock::now();
        if (now - last_poll < poll_period_) {
          until_poll = config_.poll_interval;
          continue;
        }
        last_poll = now;
      }
    } else {
      if (idle_loops == 0) {
        idle_start = Clock::now();
        ++profile_.idle_spells;
      }
      // A throttled rank needs GVT to move on, so it asks at once. A rank with no event at all asks so that
      // its peers' work commits and the run can end, but at most once per kIdleRoundGap of wall time: a rank
      // starved of events went idle tens of thousands of times a second (16k full-batch example, 2 ranks:
      // 8.6M rounds in 549 s), and every round it started cost the busy rank its share of the reductions
      // and a fossil collection. Rounds a busy rank starts every gvt_interval events, and rounds other
      // ranks start, are not limited.
      if (!in_round_ && (throttled_ || Clock::now() - last_round_end_ >= kIdleRoundGap)) start_gvt_round();
      // Saturating: idle_loops == 0 means "busy", so a long idle spell must not wrap it around.
      idle_loops = std::min(idle_loops + 1, kIdleLoopsBeforeSleep + 1);
      if (idle_loops > kIdleLoopsBeforeSleep && idle_sleep_us_ != 0)
        std::this_thread::sleep_for(std::chrono::microseconds(idle_sleep_us_));
    }
    until_poll = config_.poll_interval;
    // Network time is counted while the rank has work; an idle rank's polling is part of its idle time.
    const bool busy = idle_loops == 0;
    const Clock::time_point network_start = busy ? Clock::now() : Clock::time_point{};
    poll_network();
    if (in_round_) progress_gvt_round();
    if (!in_round_ && want_round_ && !done_) start_gvt_round();
    if (busy) profile_.network += std::chrono::duration<double>(Clock::now() - network_start).count();
  }
  if (idle_loops != 0) profile_.idle += std::chrono::duration<double>(Clock::now() - idle_start).count();
  drain_network();
}

}  // namespace warpsim
