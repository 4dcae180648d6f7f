// What a model's handler sees while it handles one event: the clock, its own id, the event's kind and
// payload, the event's random stream, and send(). The kernel behind it differs per sync mode.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "engine/event.hpp"
#include "engine/random.hpp"

namespace warpsim {

// Implemented by each kernel: schedules an event sent by the LP currently being handled.
class EventScheduler {
 public:
  virtual void schedule(LpId dst, SimTime delay, std::uint16_t kind, const void* payload,
                        std::size_t bytes) = 0;

 protected:
  ~EventScheduler() = default;
};

class LpContext {
 public:
  LpContext(EventScheduler& scheduler, std::size_t payload_capacity)
      : scheduler_(&scheduler), payload_capacity_(payload_capacity) {}

  SimTime now() const { return now_; }
  LpId self() const { return self_; }
  std::uint16_t kind() const { return kind_; }
  // The event's identity: unique across the run and identical in every sync mode and partition.
  EventKey event_key() const { return key_; }
  Rng& rng() { return rng_; }

  // The handled event's payload. Forward handlers may write to it to save what reverse needs.
  template <class T>
  T& payload() {
    static_assert(std::is_trivially_copyable_v<T>, "event payloads are copied as bytes");
    assert(sizeof(T) <= payload_capacity_);
    return *reinterpret_cast<T*>(payload_);
  }

  template <class T>
  void send(LpId dst, SimTime delay, std::uint16_t kind, const T& payload) {
    static_assert(std::is_trivially_copyable_v<T>, "event payloads are copied as bytes");
    scheduler_->schedule(dst, delay, kind, &payload, sizeof(T));
  }
  void send(LpId dst, SimTime delay, std::uint16_t kind) {
    scheduler_->schedule(dst, delay, kind, nullptr, 0);
  }
  // Untyped send, for wrappers that forward another context's events (jobs/sweep/composite_model.cpp).
  void send_bytes(LpId dst, SimTime delay, std::uint16_t kind, const void* payload, std::size_t bytes) {
    assert(bytes <= payload_capacity_);
    scheduler_->schedule(dst, delay, kind, payload, bytes);
  }

  // Kernel side: point the context at the event about to be handled.
  void bind(LpId self, SimTime now, const EventKey& key, std::uint16_t kind, std::byte* payload,
            std::uint64_t seed) {
    self_ = self;
    now_ = now;
    key_ = key;
    kind_ = kind;
    payload_ = payload;
    rng_ = Rng(seed, key.src, key.order);
  }

 private:
  EventScheduler* scheduler_;
  std::size_t payload_capacity_;
  SimTime now_ = 0;
  LpId self_ = 0;
  EventKey key_{};
  std::uint16_t kind_ = 0;
  std::byte* payload_ = nullptr;
  Rng rng_;
};

}  // namespace warpsim
