// The conservative kernel: synchronous windows of width lookahead (YAWNS-style). Every rank executes the
// events below (global minimum time + lookahead), which no other rank can still affect, then all ranks
// deliver their messages and agree on the next window.
#include <algorithm>

#include "engine/kernel/engine.hpp"

namespace warpsim {

void Engine::run_conservative() {
  std::uint64_t committed_total = 0;
  for (;;) {
    // Deliver everything in flight and find the global next event time.
    transport_->flush_all(epoch_);
    SimTime next = kTimeInfinity;
    for (;;) {
      if (ranks_ > 1) {
        transport_->poll([this](std::uint32_t epoch, const std::byte* records, std::uint32_t count) {
          on_batch(epoch, records, count);
        });
      }
      const int request = checkpointing_ ? local_checkpoint_request() : 0;
      std::uint64_t counts[5] = {transport_->batches_sent(), transport_->batches_received(), stats_.committed,
                                 request >= 1 ? 1u : 0u, request >= 2 ? 1u : 0u};
      SimTime local_next = pending_.empty() ? kTimeInfinity : pending_.top().time;
      MPI_Allreduce(MPI_IN_PLACE, counts, 5, MPI_UINT64_T, MPI_SUM, comm_);
      MPI_Allreduce(&local_next, &next, 1, MPI_UINT64_T, MPI_MIN, comm_);
      committed_total = counts[2];
      if (counts[0] == counts[1]) {
        // Between windows everything below the next event time is committed: a clean cut.
        if (counts[3] != 0) decide_cut(next, counts[4] != 0);
        break;
      }
    }
    gvt_ = next;
    ++stats_.gvt_rounds;
    if (next >= stop_time_) break;
    const SimTime window_end =
        std::min(stop_time_, next > kTimeInfinity - lookahead_ ? kTimeInfinity : next + lookahead_);
    while (!pending_.empty() && pending_.top().time < window_end) {
      const std::uint32_t index = pending_.top().index;
      pending_.pop();
      LocalLp& lp = lps_[index_.find(pool_.at(index).dst)];
      execute_forward(index, lp);
      commit_and_release(index, lp);
    }
    report_progress(window_end, committed_total, false);
  }
  transport_->complete_sends();
}

}  // namespace warpsim
