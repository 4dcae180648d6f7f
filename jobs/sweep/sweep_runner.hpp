// Runs a prepared sweep's experiments as child processes of the warpsim binary (`warpsim run` on each
// experiment file): locally K at a time with a progress line, or one experiment per Slurm array task. Both
// record results through SweepStore and rebuild the same index; finished experiments are skipped, so an
// interrupted sweep (or a requeued task) only runs what is missing.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

#include "jobs/sweep/sweep_store.hpp"

namespace warpsim::sweep {

struct RunnerOptions {
  int jobs = 1;                        // experiments at once
  std::vector<std::string> run_flags;  // extra `warpsim run` flags (e.g. --sync sequential)
  bool progress = true;                // progress line on the stream given to run_local
  std::string warpsim_binary;          // empty: this executable
  bool hdf5 = true;                    // each run writes results/<id>.h5 (`warpsim run --output`)
};

struct RunnerResult {
  std::size_t total = 0;
  std::size_t skipped = 0;   // already done before this run
  std::size_t ran = 0;       // started by this run and finished (either way)
  std::size_t failed = 0;    // of those, failed
  bool interrupted = false;  // SIGINT/SIGTERM: running children were stopped, the rest left pending
};

// The child's command line for one experiment.
std::vector<std::string> run_command(const SweepStore& store, const ManifestEntry& entry,
                                     const RunnerOptions& options);

// Runs every experiment that is not done, `options.jobs` at a time, rewriting the index after each one.
// SIGINT/SIGTERM stop the running children and return with `interrupted` set (their experiments stay
// pending and rerun on resume).
RunnerResult run_local(const SweepStore& store, const std::vector<ManifestEntry>& manifest,
                       const RunnerOptions& options, std::ostream& progress);

// Runs one experiment unless it is done, then rewrites the index. Returns 0 if the experiment is done
// (now or before), else the run's exit status.
int run_one(const SweepStore& store, const std::vector<ManifestEntry>& manifest, std::size_t index,
            const RunnerOptions& options);

}  // namespace warpsim::sweep
