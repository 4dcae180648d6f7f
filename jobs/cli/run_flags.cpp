// The flags of `warpsim run` besides the engine's (see run_flags.hpp).
#include "jobs/cli/run_flags.hpp"

#include "experiment/training_partition.hpp"

namespace warpsim::cli {

void add_run_partition_options(CLI::App& command, experiment::EngineOptions& engine, std::string& map_file) {
  engine.graph_partitions = true;
  command.get_option("--partition")
      ->description("LP to rank mapping: " + experiment::partition_strategy_list());
  command
      .add_option("--partition-map", map_file,
                  "LP to rank map file written by `warpsim partition --write-map` (instead of --partition)")
      ->excludes("--partition");
}

void add_run_output_options(CLI::App& command, experiment::RunOutputOptions& o, double& sample_interval_ns) {
  CLI::Option* output = command.add_option(
      "--output", o.path,
      "write the results file (HDF5: per-component time series, meta, summary; docs/hdf5-layout.md)");
  command
      .add_option("--sample-interval", sample_interval_ns,
                  "series sample interval in ns (overrides simulation.sample_interval_ns; default: the "
                  "spec's, else about 100 samples over the estimated run)")
      ->needs(output);
  command.add_flag("--overwrite", o.overwrite, "replace an existing --output file")->needs(output);
  command
      .add_option("--compression", o.compression,
                  "deflate level 0-9 of the series datasets (0 = uncompressed)")
      ->capture_default_str()
      ->needs(output);
  command
      .add_option(
          "--output-layout", o.layout,
          "with several ranks: 'per-rank' (each rank writes FILE.ranks/rank-N.h5 and FILE joins them with "
          "virtual datasets: keep FILE.ranks/ next to FILE) or 'single' (one self-contained file, collective "
          "MPI-IO writes); one rank always writes one file")
      ->capture_default_str()
      ->needs(output);
}

}  // namespace warpsim::cli
