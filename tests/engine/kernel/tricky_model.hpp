// A model-agnostic test LP type with deliberately tricky reverse handlers, for the oracle tests:
// modular-multiply state (undone with a modular inverse), a max() undone from a value saved in the event,
// conditional incremental state saving (a vector that grows on some events), chains of zero-delay
// self-events (generation tie-breaks), quantized delays so that many events tie on time, optional zero-delay
// sends to other LPs, and a commit hook whose order-sensitive hash checks that commits arrive in LP order.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/model.hpp"

namespace warpsim::testing {

struct TrickyParams {
  std::uint64_t lp_count = 64;
  SimTime quantum = 1000;          // delays are multiples of this
  bool zero_delay_remote = false;  // also send zero-delay events to other LPs (optimistic/sequential only)
};

class TrickyLp final : public LpType {
 public:
  explicit TrickyLp(const TrickyParams& params) : params_(params) {}
  std::string_view name() const override { return "tricky"; }
  std::size_t state_bytes() const override { return sizeof(State); }
  std::uint32_t add_lp(LpId id) override;
  void init(std::uint32_t slot, LpContext& ctx) override;
  void forward(std::uint32_t slot, LpContext& ctx) override;
  void reverse(std::uint32_t slot, LpContext& ctx) override;
  void commit(std::uint32_t slot, LpContext& ctx) override;
  std::uint64_t digest(std::uint32_t slot) const override;
  bool checkpointable() const override { return true; }
  void save(std::uint32_t slot, std::ostream& out) const override;
  void load(std::uint32_t slot, std::istream& in) override;

  struct Payload {
    std::uint64_t value;
    std::uint64_t saved_max;
    std::uint32_t hops;
    std::uint32_t pad;
  };
  enum Kind : std::uint16_t { kWork = 0, kEcho = 1 };

 private:
  struct State {
    std::uint64_t acc = 1;
    std::uint64_t max_seen = 0;
    std::uint64_t handled = 0;
    std::uint64_t echoes = 0;
    std::uint64_t commit_chain = 0;  // written only by commit()
    std::uint64_t commits = 0;
    std::vector<std::uint64_t> history;
  };
  TrickyParams params_;
  std::vector<State> states_;
};

class TrickyModel final : public Model {
 public:
  explicit TrickyModel(const TrickyParams& params) : params_(params), type_(params) {}
  std::uint64_t lp_count() const override { return params_.lp_count; }
  std::size_t type_count() const override { return 1; }
  LpType& type(std::size_t) override { return type_; }
  std::size_t type_of(LpId) const override { return 0; }
  std::size_t payload_bytes() const override { return sizeof(TrickyLp::Payload); }
  SimTime lookahead() const override { return params_.zero_delay_remote ? 0 : params_.quantum; }

 private:
  TrickyParams params_;
  TrickyLp type_;
};

}  // namespace warpsim::testing
