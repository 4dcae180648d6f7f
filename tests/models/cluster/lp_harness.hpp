// For tests that drive one cluster LP type's handlers directly, without an engine: a scheduler that only
// counts the sends (the properties concern the LP's own state), and an event recorded with its key so that
// it can be reversed and replayed.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "engine/lp_context.hpp"
#include "models/cluster/cluster_events.hpp"

namespace warpsim::cluster {

class CountingScheduler final : public EventScheduler {
 public:
  void schedule(LpId, SimTime, std::uint16_t, const void*, std::size_t) override { ++sends; }
  std::uint64_t sends = 0;
};

struct RecordedEvent {
  SimTime time;
  std::uint16_t kind;
  EventKey key;
  std::array<std::byte, kMaxPayloadBytes> payload;
};

}  // namespace warpsim::cluster
