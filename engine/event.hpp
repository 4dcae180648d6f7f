// The engine's event record and the deterministic total order of events.
// Every event carries a key (receive time, generation, sender sequence, sender LP). The key is assigned by
// the sender and never depends on ranks or partition, which is what makes every sync mode and rank count
// process each LP's events in exactly the same order as the sequential run.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>

#include "engine/sim_time.hpp"

namespace warpsim {

inline constexpr std::uint32_t kNil = 0xffffffffu;

// Generation breaks ties between an event and the same-time events it causes: a child scheduled with zero
// delay gets its parent's generation + 1, so it always sorts after its parent (causality-consistent order).
inline constexpr unsigned kGenerationBits = 16;
inline constexpr unsigned kSequenceBits = 64 - kGenerationBits;
inline constexpr std::uint64_t kSequenceMask = (std::uint64_t{1} << kSequenceBits) - 1;
inline constexpr std::uint64_t kMaxGeneration = (std::uint64_t{1} << kGenerationBits) - 1;

struct EventKey {
  SimTime time = 0;
  std::uint64_t order = 0;  // generation << 48 | sender's send sequence number
  LpId src = 0;

  friend auto operator<=>(const EventKey&, const EventKey&) = default;
  friend bool operator==(const EventKey&, const EventKey&) = default;
};

inline std::uint64_t make_order(std::uint64_t generation, std::uint64_t sequence) {
  return (generation << kSequenceBits) | (sequence & kSequenceMask);
}
inline std::uint64_t generation_of(std::uint64_t order) {
  return order >> kSequenceBits;
}
inline std::uint64_t sequence_of(std::uint64_t order) {
  return order & kSequenceMask;
}

enum class EventState : std::uint8_t { kFree, kPending, kProcessed, kCancelled };

enum EventFlags : std::uint8_t {
  kFlagAnti = 1u << 0,          // wire only: cancels the event with the same (src, sequence)
  kFlagRemoteOrigin = 1u << 1,  // received from another rank; indexed for anti-message lookup
  kFlagFromRemote = 1u << 2,    // received from another rank, any sync mode (counts committed_remote)
};

// Fixed 40-byte header; the model payload follows it in the same pool slot (see EventPool).
struct EventHeader {
  SimTime time;
  std::uint64_t order;
  LpId src;
  LpId dst;
  std::uint32_t next;   // processed-list successor, or free-list link
  std::uint32_t prev;   // processed-list predecessor
  std::uint32_t sends;  // head of this event's send-record list (optimistic mode)
  std::uint16_t kind;   // model-defined event kind
  EventState state;
  std::uint8_t flags;

  EventKey key() const { return EventKey{time, order, src}; }
  std::byte* payload() { return reinterpret_cast<std::byte*>(this + 1); }
  const std::byte* payload() const { return reinterpret_cast<const std::byte*>(this + 1); }
};
static_assert(sizeof(EventHeader) == 40, "event header layout is part of the memory budget");

}  // namespace warpsim
