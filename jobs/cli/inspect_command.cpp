// `warpsim inspect FILE`: lists a series file's datasets (shapes, units), prints /meta and /summary and the
// hottest components of a metric; `--trace OUT.json` exports selected components as Chrome/Perfetto
// counter tracks. Runs on rank 0 only (it is a serial reader).
#include <CLI/CLI.hpp>

#include <iomanip>
#include <iostream>
#include <memory>
#include <string>

#include "io/hdf5_inspect.hpp"
#include "io/trace_export.hpp"
#include "jobs/cli/command_registry.hpp"
#include "jobs/cli/usage_error.hpp"

namespace warpsim::cli {

namespace {

struct InspectOptions {
  std::string file;
  std::string metric;  // kind/metric; default: the first series in the file
  std::int64_t top = 10;
  std::string trace;
  std::string components;  // "0-15,20"; empty = the first --max-tracks of each kind
  std::string kind;
  std::int64_t max_tracks = 64;
  // --metric or --top given: the user asked for the top-N list, so the file description (datasets,
  // /meta, /summary: hundreds of lines) is left out unless --all asks for it too.
  bool top_only = false;
  bool all = false;
};

int run_inspect(const InspectOptions& o, int rank) {
  if (o.top < 0) throw UsageError("--top must be >= 0");
  if (o.max_tracks < 1) throw UsageError("--max-tracks must be >= 1");
  if (rank != 0) return 0;
  if (!o.top_only || o.all) {
    io::describe_series_file(o.file, std::cout);
    io::print_summary(o.file, std::cout);
  }

  std::string metric = o.metric;
  if (metric.empty()) {
    const auto metrics = io::list_metrics(o.file);
    if (!metrics.empty()) metric = metrics.front();
  }
  if (!metric.empty() && o.top > 0) {
    std::string aggregation, unit;
    const auto hottest =
        io::hottest_components(o.file, metric, static_cast<std::size_t>(o.top), &aggregation, &unit);
    const std::string score = aggregation == "max" ? "max" : aggregation == "time_average" ? "mean" : "total";
    std::cout << "top " << hottest.size() << " components by " << score << " of " << metric << " (" << unit
              << "):\n";
    for (std::size_t i = 0; i < hottest.size(); ++i) {
      std::cout << "  " << std::setw(3) << i + 1 << ". id " << hottest[i].id;
      if (!hottest[i].name.empty()) std::cout << " (" << hottest[i].name << ")";
      std::cout << ": " << std::setprecision(12) << hottest[i].score << '\n';
    }
  }
  if (!o.trace.empty()) {
    io::TraceSelection sel;
    if (!o.kind.empty()) sel.kinds.push_back(o.kind);
    if (!o.components.empty()) sel.components = io::parse_id_ranges(o.components, "--components");
    sel.max_components = static_cast<std::size_t>(o.max_tracks);
    const std::uint64_t events = io::export_trace(o.file, o.trace, sel);
    std::cout << "trace: " << o.trace << " (" << events << " counter events)\n";
  }
  return 0;
}

}  // namespace

std::function<int()> add_inspect_command(CLI::App& app, const CommandEnv& env) {
  const int rank = env.rank;
  auto options = std::make_shared<InspectOptions>();
  CLI::App* cmd =
      app.add_subcommand("inspect", "Describe a series file (HDF5); export a Perfetto/Chrome trace");
  cmd->add_option("file", options->file, "results file written by --output")->required();
  cmd->add_option("--metric", options->metric, "KIND/METRIC for the top-N list (default: the first series)");
  cmd->add_option("--top", options->top,
                  "how many of the hottest components to list; with --metric or --top only that list is printed")
      ->capture_default_str();
  cmd->add_flag("--all", options->all, "with --metric/--top: print the file description and summary too");
  CLI::Option* trace = cmd->add_option("--trace", options->trace, "write a trace-event JSON file here");
  cmd->add_option("--components", options->components, "component ids for --trace, e.g. 0-15,20")
      ->needs(trace);
  cmd->add_option("--kind", options->kind, "only this component kind in --trace")->needs(trace);
  cmd->add_option("--max-tracks", options->max_tracks, "components per kind in --trace without --components")
      ->capture_default_str()
      ->needs(trace);
  return [options, cmd, rank]() -> int {
    if (!cmd->parsed()) return -1;
    options->top_only = cmd->get_option("--metric")->count() > 0 || cmd->get_option("--top")->count() > 0;
    return run_inspect(*options, rank);
  };
}

const CommandRegistrar kRegisterInspect{"inspect", add_inspect_command};

}  // namespace warpsim::cli
