// SIGTERM/SIGUSR1 as a checkpoint request (docs/checkpoint.md): Slurm sends one before it preempts or
// times out a job. The handler only sets a flag; the engine polls it and the ranks agree on a cut.
#pragma once

namespace warpsim {

// Installs the handlers for SIGTERM and SIGUSR1 (idempotent).
void install_checkpoint_signal_handlers();
// True once either signal has arrived since the last clear.
bool checkpoint_signal_received();
void clear_checkpoint_signal();

}  // namespace warpsim
