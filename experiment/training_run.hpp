// `warpsim run` without the command line: what a front end (the CLI, a service) asks for and what it gets
// back. run_training loads and checks the spec, applies the flags over its settings (settings.hpp), builds
// the job (training_setup.hpp), partitions it, runs the engine (with checkpoints and the HDF5 series when
// asked), the what-if reruns of --attribute and of the checkpoint stall, and assembles the summary report.
#pragma once

#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

#include "engine/sim_time.hpp"
#include "experiment/engine_settings.hpp"
#include "experiment/run_output.hpp"
#include "experiment/settings.hpp"
#include "experiment/spec/experiment.pb.h"
#include "io/key_value_report.hpp"

namespace warpsim::experiment {

struct RunRequest {
  std::string spec_path;
  EngineOptions engine;       // the engine flags' values (defaults where not given)
  SpecOverridingFlags given;  // the flags the user wrote that a spec field can also set
  std::string partition_map;  // --partition-map FILE, instead of a strategy
  bool check_only = false;    // validate and size the experiment, without simulating
  bool attribute = false;     // also the what-if reruns without each communication class
  RunOutputOptions output;
  CheckpointOptions checkpoint;
  // Called on rank 0 before simulating with the forecast's warnings (run_forecast.hpp), one line each; the
  // front end decides how to show them. Unset: not shown.
  std::function<void(const std::vector<std::string>&)> warn;
};

struct RunOutcome {
  // On rank 0 the summary (or, for check_only, the spec check); empty on the other ranks.
  io::KeyValueReport report;
  // The run stopped after writing a checkpoint (every rank alike): no report; resume later.
  bool stopped_at_checkpoint = false;
  std::string checkpoint_path;
  SimTime checkpoint_time = 0;
};

// Collective over `comm`. Throws SettingError (bad flag or setting), std::invalid_argument (bad spec) or
// std::runtime_error (the run failed).
RunOutcome run_training(const RunRequest& request, MPI_Comm comm);
// The same on an experiment already loaded and validated (spec::load_experiment_spec or spec::validated);
// request.spec_path is then only the name the outputs record. `warpsim validate` runs its rows' variants
// (a data-parallel replica, fewer micro-batches) this way.
RunOutcome run_training(const spec::ExperimentSpec& exp, const RunRequest& request, MPI_Comm comm);

}  // namespace warpsim::experiment
