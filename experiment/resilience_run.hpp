// `warpsim run` with reliability.simulate_failures: after the main simulation, a second engine run of the
// resilience model (models/reliability/resilience_model.hpp), sequential on rank 0, whose step
// time, checkpoint stall C, restart R and checkpoint interval K are the ones the goodput model uses
// (run_economics.hpp, GoodputInputs), and whose failure domains are the job's nodes and, where the spec
// gives rates for them, the fabric switches and storage targets. Adds the "simulated ..." keys next to the
// analytic (and Monte-Carlo) answers for the same horizon, and the committed progress and failure tables
// to the results file. Model and measurements: docs/energy-cost.md, "Failures simulated inside the run".
#pragma once

#include <mpi.h>

#include <optional>
#include <string>
#include <vector>

#include "engine/kernel/engine.hpp"
#include "experiment/run_economics.hpp"
#include "experiment/spec/experiment.pb.h"
#include "io/key_value_report.hpp"
#include "models/reliability/job_timeline_lp.hpp"
#include "models/reliability/resilience_model.hpp"

namespace warpsim::experiment {

struct ResilienceRun {
  reliability::ResilienceParams params;
  reliability::ResilienceOutcome outcome;          // every rank
  RunResult run;                                   // the engine's result (digest, events)
  std::vector<reliability::ProgressRow> progress;  // rank 0, in time order (when recorded)
  std::vector<reliability::FailureRow> failures;   // rank 0, in time order (when recorded)
};

// The resilience parameters of the experiment: T, C, R, K from `inputs`, the domains from the cluster's
// inventory (`totals`: counts per kind over the cluster) and the job's `world` GPUs.
reliability::ResilienceParams resilience_params(const spec::ExperimentSpec& exp,
                                                const economics::GoodputInputs& inputs,
                                                const energy::ComponentTotals& totals, std::uint32_t world);

// Collective over `comm`: runs the model with `config`'s sync mode and engine settings (its end time
// becomes the horizon), LPs mapped round-robin when `partition` is "round-robin" and in blocks otherwise.
// With `record`, rank 0 gets the committed progress and failure rows.
ResilienceRun run_resilience(const reliability::ResilienceParams& params, EngineConfig config,
                             const std::string& partition, MPI_Comm comm, bool record);

// What `warpsim run` uses: the model above with the sequential kernel on rank 0 alone, whatever the main
// run's ranks and sync mode (the other ranks return at once with an empty result). The timeline is one
// serial chain of events (each phase change schedules the next), so extra ranks can only add rollbacks
// and GVT rounds: over 5000 simulated hours, 1.6-1.8 s sequential against 6.2-6.5 s optimistic on 2
// ranks. The results equal any rank count's (the oracle tests run the model optimistically).
ResilienceRun run_resilience_on_rank0(const reliability::ResilienceParams& params, EngineConfig config,
                                      MPI_Comm comm, bool record);

// Rank 0: the "simulated ..." keys and the analytic / Monte-Carlo ones for the same horizon.
void add_resilience_report(io::KeyValueReport& report, const ResilienceRun& r,
                           const economics::GoodputInputs& inputs, std::uint32_t monte_carlo_trials,
                           std::uint64_t seed);

// Rank 0, after the results file is written: /resilience/progress and /resilience/failures
// (docs/hdf5-layout.md).
void write_resilience_tables(const std::string& path, const ResilienceRun& r);

}  // namespace warpsim::experiment
