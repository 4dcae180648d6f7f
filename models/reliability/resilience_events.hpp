// Event kinds and the one payload of the resilience model (resilience_model.hpp), shared by its two LP
// types. The payload is also where the job timeline's forward handler saves what it overwrites, so that
// reverse can restore it, and the values its commit handler records (commit runs when the state has moved
// on).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "engine/sim_time.hpp"

namespace warpsim::reliability {

enum ResilienceEvent : std::uint16_t {
  kNextFailure = 1,     // domain -> itself: its next primary failure is due
  kRepeatFailure = 2,   // domain -> itself: a correlated repeat of an earlier failure is due
  kFailure = 3,         // domain -> job timeline: a component failed
  kStepDone = 4,        // timeline -> itself: a training step completed
  kCheckpointDone = 5,  // timeline -> itself: a checkpoint completed
  kRestartDone = 6,     // timeline -> itself: a restart completed (training resumes unless nodes are short)
  kRepairDone = 7,      // timeline -> itself: a failed node is back from repair (a spare again)
};

// kWaiting: the restart is done but more nodes are in repair than there are spares (the spare pool).
enum class Phase : std::uint8_t { kWorking, kCheckpointing, kRestarting, kWaiting };
inline constexpr std::size_t kPhases = 4;

// Whether a failed component takes its node out for repair (the spare pool): the node domain's classes.
inline bool takes_node(std::uint8_t component) {
  return component <= 3;  // Component::kGpu, kNode, kNic, kNvSwitch
}

struct ResiliencePayload {
  // The message.
  std::uint32_t epoch = 0;     // timeline events: the epoch they were scheduled in (stale ones are ignored)
  std::uint8_t component = 0;  // failures: Component
  std::uint8_t repeat = 0;     // failures: 1 = a correlated repeat
  // Written by the timeline's forward handler.
  std::uint8_t applied = 0;  // 1 = the event changed the state (not stale)
  std::uint8_t old_phase = 0;
  std::uint8_t phase_after = 0;  // for the progress table
  std::uint32_t domain = 0;      // failures: the failing domain's LP id
  std::uint32_t old_steps_since_checkpoint = 0;
  std::uint64_t index = 0;  // failures: the component's index within its class over the whole job
  SimTime failed_at = 0;    // failures: when the component failed (the domain's time)
  SimTime old_phase_start = 0;
  SimTime old_segment_start = 0;
  SimTime old_last_checkpoint_end = 0;
  std::uint64_t progress_after = 0;  // steps of progress after the event (for the series)
  std::uint64_t saved_after = 0;     // checkpointed steps after the event
};

// Seconds to engine picoseconds (rounded), saturating at kTimeInfinity: an exponential draw can exceed
// the 2^64 ps (213 days) engine time holds, and converting such a double to an integer is undefined (on
// x86 it gave 0, a failure at once: 4.8% too many failures over 200-day runs before this saturated).
inline SimTime to_ps(double seconds) {
  const double ps = std::round(seconds * static_cast<double>(kPicosPerSecond));
  if (!(ps < 0x1.0p64)) return kTimeInfinity;
  return ps > 0 ? static_cast<SimTime>(ps) : 0;
}
inline double to_seconds(SimTime ps) {
  return static_cast<double>(ps) / static_cast<double>(kPicosPerSecond);
}

// Failure detection: a failure reaches the job timeline this long after it happened. Also the model's
// lookahead (the conservative mode's window); negligible against any restart.
inline constexpr SimTime kDetectionDelay = kPicosPerMicro;

}  // namespace warpsim::reliability
