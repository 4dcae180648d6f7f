// The ranks a simulating subcommand runs on: every rank, unless the node's CPUs are shared, in which case
// only as many ranks per node as it has free CPUs simulate and the rest wait (engine/kernel/active_ranks.hpp,
// docs/running.md "Shared nodes"). `--shared-node shrink|keep` chooses; its default comes from the
// WARPSIM_SHARED_NODE environment variable when set (the test suite sets keep, so that its 2- and 4-rank
// oracle runs stay on 2 and 4 ranks while other tests load the machine), else shrink.
#pragma once

#include <mpi.h>

#include <functional>

#include "experiment/engine_settings.hpp"

namespace warpsim::cli {

// Runs `body` with the communicator of the simulating ranks on those ranks, and returns its exit code on
// every rank (the waiting ranks sleep until it is known). Collective over MPI_COMM_WORLD. Keeps every rank
// for a sequential run (so that more than one rank is still refused) and for checkpointed or resumed runs
// (a checkpoint is tied to its rank count, which a later probe could change).
int on_simulating_ranks(const experiment::EngineOptions& engine, bool checkpoints,
                        const std::function<int(MPI_Comm)>& body);

}  // namespace warpsim::cli
