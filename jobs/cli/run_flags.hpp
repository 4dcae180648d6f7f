// The flags of `warpsim run` besides the engine's: where the LP -> rank map comes from (--partition with
// every strategy, --partition-map) and the HDF5 results file (--output and its options).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "experiment/engine_settings.hpp"
#include "experiment/run_output.hpp"

namespace warpsim::cli {

// Lets --partition (added by add_engine_options) take every strategy and adds --partition-map FILE.
void add_run_partition_options(CLI::App& command, experiment::EngineOptions& engine, std::string& map_file);

// --output, --sample-interval (into sample_interval_ns), --overwrite, --compression, --output-layout.
void add_run_output_options(CLI::App& command, experiment::RunOutputOptions& options,
                            double& sample_interval_ns);

}  // namespace warpsim::cli
