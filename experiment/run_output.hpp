// `warpsim run --output FILE`: the HDF5 results file of a training run (docs/hdf5-layout.md). Checks the
// output settings and the path BEFORE the simulation (bad input is a SettingError, exit 2), takes the
// sample interval settings.hpp resolved (automatic when none), holds the SeriesRecorder the cluster model's
// commit handlers fill, and at the end writes /meta (spec as text and JSON, version, git revision, partition,
// seed, ranks, sync), /components, /series (with power and energy when the experiment has a power model) and
// /summary (the run report's numeric keys) collectively from every rank.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/series_recorder.hpp"
#include "experiment/settings.hpp"
#include "io/hdf5_series_writer.hpp"
#include "io/key_value_report.hpp"
#include "experiment/spec/experiment_spec.hpp"
#include "models/energy/power_model.hpp"

namespace warpsim::experiment {

struct RunOutputOptions {
  std::string path;        // --output; empty = no results file (and no sampling cost)
  bool overwrite = false;  // --overwrite
  int compression = io::SeriesFileOptions{}.deflate_level;  // --compression: the writer's default level
  // --output-layout: "per-rank" (a file per rank joined by virtual datasets) or "single" (one file)
  std::string layout = "per-rank";
};

// What describes the run in /meta besides the spec.
struct RunFacts {
  std::string sync;
  std::string partition;
  std::int64_t seed = 0;
  int ranks = 1;
};

class RunOutput {
 public:
  // Collective. Null when no --output was given. Throws SettingError naming the flag or field for a bad
  // option, an interval giving too many samples, an unwritable path or an existing file without
  // --overwrite. `interval` comes from resolve_sample_interval (0 = automatic: `estimate_seconds`, the
  // analytic run length, sizes it).
  static std::unique_ptr<RunOutput> prepare(const RunOutputOptions& options, const spec::ExperimentSpec& exp,
                                            const Setting<SimTime>& interval, RunFacts facts,
                                            double estimate_seconds, SimTime end_time, MPI_Comm comm);

  SeriesRecorder& recorder() { return recorder_; }
  SimTime interval() const { return recorder_.interval(); }

  // Collective: rank 0 passes its finished report, the other ranks nullptr. Ends the grid after the last
  // sample any rank recorded; with a power model (the experiment's cost section) derives the power and
  // energy series (models/energy/power_series.hpp) and their /summary totals; writes the file (temporary
  // name, then rename) and adds the "output ..." keys to rank 0's report.
  void write(io::KeyValueReport* report, MPI_Comm comm);
  // A group of result scalars beside /summary ("jobs/<name>", io::RunMetadata::result_groups), written by
  // write(); every rank adds the same groups (write is collective).
  void add_result_group(std::string path, std::vector<io::SummaryValue> values) {
    result_groups_.emplace_back(std::move(path), std::move(values));
  }

 private:
  RunOutput(const RunOutputOptions& options, SimTime interval, SimTime end_time)
      : options_(options), recorder_(interval, end_time) {}

  RunOutputOptions options_;
  SeriesRecorder recorder_;
  std::string spec_text_, spec_json_, experiment_;
  bool automatic_ = false;                    // the interval was not given: it may widen at the end
  std::optional<energy::PowerParams> power_;  // the run's power model, when the spec has a cost section
  RunFacts facts_;
  std::vector<std::pair<std::string, std::vector<io::SummaryValue>>> result_groups_;
};

// The automatic interval: `seconds` / 100 rounded up to 1, 2 or 5 x 10^k ns (>= 1 ns), so 40-100 samples
// over `seconds` (the compute-only estimate: a lower bound of the run).
// At the end of the run it widens (by 2, 5, 10, 20, ...) until at most kMaxAutomaticSamples remain.
inline constexpr std::uint64_t kMaxAutomaticSamples = 500;
SimTime automatic_interval_ps(double seconds);

}  // namespace warpsim::experiment
