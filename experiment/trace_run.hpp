// `warpsim run` on an experiment whose workload is a Chakra trace folder (ExperimentSpec.chakra_trace): finds
// the per-rank files, reads them (a malformed file is one std::invalid_argument naming the file and byte
// offset), maps them onto the cluster (training::TraceProgram), runs the engine with the same sync modes,
// partitions (block, round-robin or a map file) and HDF5 output as a training run, and summarizes the
// replay: makespan, per-GPU compute and communication time, exposed communication and what was skipped.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "experiment/spec/experiment.pb.h"
#include "experiment/training_run.hpp"
#include "models/training/trace_program.hpp"

namespace warpsim::experiment {

// The trace files of `c` (its folder already resolved), rank order. Throws std::invalid_argument naming
// chakra_trace.folder or .file_prefix when there are none, a rank is missing or the prefix is ambiguous.
std::vector<std::string> chakra_trace_files(const spec::ChakraTraceSpec& c);

// The replay program of a validated experiment with a chakra_trace (reads every file).
std::shared_ptr<const training::TraceProgram> build_trace_program(const spec::ExperimentSpec& exp);

// Collective over `comm` (every rank reads the traces). Errors as run_training's.
RunOutcome run_trace(const spec::ExperimentSpec& exp, const RunRequest& request, MPI_Comm comm);

}  // namespace warpsim::experiment
