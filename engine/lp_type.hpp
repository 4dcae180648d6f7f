// The contract between the engine and a model's logical-process type (ROSS-like, without globals).
// A type owns the state of the LPs it was given (by slot), handles events forward, undoes them in reverse
// (reverse computation or state saved in the event payload), and sees each event once more at commit,
// when it can no longer be rolled back: the only place a model may emit output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

#include "engine/checkpoint_io.hpp"
#include "engine/lp_context.hpp"

namespace warpsim {

class LpType {
 public:
  virtual ~LpType() = default;

  virtual std::string_view name() const = 0;
  // Bytes of model state per LP of this type (for the memory report).
  virtual std::size_t state_bytes() const = 0;

  // Creates state for LP `id` on this rank; returns its slot, used in every later call.
  virtual std::uint32_t add_lp(LpId id) = 0;

  // Schedules the LP's initial events. now() is 0; sends from init cannot be rolled back.
  virtual void init(std::uint32_t slot, LpContext& ctx) = 0;
  virtual void forward(std::uint32_t slot, LpContext& ctx) = 0;
  // Must restore exactly the state before forward(). The engine itself retracts the events forward sent,
  // and ctx.rng() replays the same draws forward saw.
  virtual void reverse(std::uint32_t slot, LpContext& ctx) = 0;
  // Called once per event in LP order when the event is final (time below GVT). May not send.
  virtual void commit(std::uint32_t /*slot*/, LpContext& /*ctx*/) {}
  // Called once per LP after the run ends.
  virtual void finalize(std::uint32_t /*slot*/) {}

  // A digest of the LP's state, compared across sync modes and partitions by the oracle tests.
  virtual std::uint64_t digest(std::uint32_t slot) const = 0;

  // Checkpoint/restart (docs/checkpoint.md). save() is called at a cut where every event the LP handled is
  // committed (no undo information is live); load() restores that state into a slot add_lp() just made,
  // instead of init(). load() throws CheckpointError on malformed input. A type that does not override
  // them makes the engine refuse --checkpoint-dir/--resume up front, naming the type.
  virtual bool checkpointable() const { return false; }
  virtual void save(std::uint32_t /*slot*/, std::ostream& /*out*/) const { refuse(); }
  virtual void load(std::uint32_t /*slot*/, std::istream& /*in*/) { refuse(); }

 private:
  [[noreturn]] void refuse() const {
    throw CheckpointError("checkpoint not supported by LP type '" + std::string(name()) + "'");
  }
};

}  // namespace warpsim
