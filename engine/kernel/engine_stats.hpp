// Counters every run reports, per rank and reduced over ranks, whatever the model.
#pragma once

#include <cstdint>

namespace warpsim {

struct EngineStats {
  std::uint64_t committed = 0;    // events executed and final
  std::uint64_t processed = 0;    // forward executions, including ones later rolled back
  std::uint64_t rolled_back = 0;  // reverse executions
  std::uint64_t rollbacks = 0;    // rollback episodes (stragglers + anti-messages that hit processed events)
  std::uint64_t remote_sent = 0;  // events sent to another rank
  std::uint64_t committed_remote = 0;  // committed events that came from another rank (partition quality)
  std::uint64_t anti_sent = 0;         // anti-messages sent
  std::uint64_t annihilated = 0;       // events cancelled by anti-messages or local retraction
  std::uint64_t gvt_rounds = 0;        // completed GVT computations (or conservative windows)
  std::uint64_t mpi_messages = 0;      // MPI messages (batches) sent
  std::uint64_t throttle_waits = 0;    // times a rank stopped because of the optimism throttle
  std::uint64_t memory_cuts = 0;  // times a rank halved its uncommitted-event limit to keep a memory budget
  std::uint64_t peak_uncommitted = 0;
  std::uint64_t peak_events = 0;        // peak live events in the pool
  std::uint64_t event_bytes = 0;        // bytes per event slot (header + payload)
  std::uint64_t lp_bytes = 0;           // engine bytes per LP (excluding model state)
  std::uint64_t model_state_bytes = 0;  // model state bytes summed over local LPs
  std::uint64_t local_lps = 0;
};

}  // namespace warpsim
