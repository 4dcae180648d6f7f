// A trivial LP type for the model-API tests, written the way a new LP type is meant to be: one file pair
// deriving from SlottedLpType (no slot bookkeeping of its own) plus one registration line in the model.
// Each echo LP starts one ball and, on every ball it receives, counts it and throws it on to a random LP
// after `hop_delay` plus a random jitter, until `end_time`. The random destination makes the events cross
// ranks, so optimistic runs roll back and reverse() runs.
#pragma once

#include <cstdint>

#include "engine/slotted_lp_type.hpp"

namespace warpsim::testing {

struct EchoParams {
  std::uint64_t lp_count = 16;
  SimTime hop_delay = 1000;  // also the model's lookahead
  SimTime end_time = 200'000;
};

struct EchoState {
  LpId id = 0;
  std::uint64_t received = 0;  // balls this LP caught
  std::uint64_t checksum = 0;  // sum of a hash of each caught ball's event key
};

// Checkpoints use the base's default (the State's bytes).
class EchoLp final : public SlottedLpType<EchoState> {
 public:
  explicit EchoLp(const EchoParams& params) : params_(params) {}
  std::string_view name() const override { return "echo"; }
  void init(std::uint32_t slot, LpContext& ctx) override;
  void forward(std::uint32_t slot, LpContext& ctx) override;
  void reverse(std::uint32_t slot, LpContext& ctx) override;
  std::uint64_t digest(std::uint32_t slot) const override;

 private:
  EchoParams params_;
};

}  // namespace warpsim::testing
