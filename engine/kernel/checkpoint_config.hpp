// Checkpoint/restart settings of a run (docs/checkpoint.md): where checkpoints go, what triggers one
// (a simulated time, a wall-clock period, SIGTERM/SIGUSR1), what to resume from, and the caller's state
// and identity that travel with the engine's. All ranks must pass the same settings.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "engine/sim_time.hpp"

namespace warpsim {

struct CheckpointConfig {
  // Checkpoints are written under this directory (created if missing); empty = never write one.
  std::string dir;
  // Write one once every event below this simulated time is committed (kTimeInfinity = none).
  SimTime at = kTimeInfinity;
  // Also write one about every this many wall-clock seconds (0 = off); the run continues after each.
  double every_seconds = 0;
  // SIGTERM/SIGUSR1 (install_checkpoint_signal_handlers) make the ranks agree on a cut, write a
  // checkpoint there and stop (RunResult::stopped_at_checkpoint).
  bool on_signal = false;
  // Stop after the first checkpoint written, whatever triggered it.
  bool stop_after_first = false;
  // Start from the checkpoint in this directory (or its newest complete ckpt-* subdirectory) instead
  // of the model's init(); empty = a fresh run.
  std::string resume;
  // What identifies the run besides the model's shape, seed and partition (e.g. a hash of the spec):
  // written to the manifest, and a resume whose values differ is refused naming the key.
  std::vector<std::pair<std::string, std::string>> identity;
  // The caller's per-rank state outside the LPs (e.g. output buffers), saved and restored with the
  // rank's file. load_extra throws on malformed input.
  std::function<void(std::ostream&)> save_extra;
  std::function<void(std::istream&)> load_extra;

  bool writes() const { return !dir.empty(); }
};

}  // namespace warpsim
