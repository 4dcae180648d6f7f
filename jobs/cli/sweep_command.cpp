// `warpsim sweep SPEC --out DIR [--jobs K]`: expands a SweepSpec into experiments and runs them as child
// `warpsim run` processes, K at a time, into DIR (results per experiment + index.csv/index.h5); rerunning
// the same command resumes, skipping finished experiments. `--slurm` submits the sweep as a job array
// instead (one task per experiment, at most K at once); each task runs `warpsim sweep --out DIR --task N`.
// `--list` prints the expansion, `--index` only rebuilds the index.
#include <CLI/CLI.hpp>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "io/key_value_report.hpp"
#include "jobs/cli/command_registry.hpp"
#include "jobs/cli/usage_error.hpp"
#include "experiment/spec/experiment_spec.hpp"
#include "experiment/spec/sweep_spec.hpp"
#include "jobs/sweep/child_process.hpp"
#include "jobs/sweep/in_process.hpp"
#include "jobs/sweep/sweep_runner.hpp"
#include "jobs/sweep/sweep_store.hpp"
#include "slurm/sbatch_script.hpp"
#include "slurm/slurm_client.hpp"
#include "slurm/submit_options.hpp"

namespace warpsim::cli {

namespace {

struct SweepFlags {
  std::string spec_path;
  std::string out_dir;
  int jobs = 1;
  std::int64_t task = -1;
  bool list = false;
  bool index_only = false;
  bool no_progress = false;
  bool no_hdf5 = false;
  int in_process = 0;
  std::vector<std::string> run_flags;
  // Slurm
  bool slurm = false;
  bool dry_run = false;
  std::string slurm_config, partition, time_limit, account;
};

std::string absolute(const std::string& path) {
  return std::filesystem::absolute(path).lexically_normal().string();
}

int list_sweep(const spec::Sweep& sweep) {
  std::cout << "# sweep " << sweep.name << ": " << sweep.experiments.size() << " experiments\n";
  std::cout << "index\tid\tname\toverrides\n";
  for (const auto& e : sweep.experiments)
    std::cout << e.index << '\t' << e.id << '\t' << e.name << '\t' << e.overrides_text() << '\n';
  return 0;
}

int submit_sweep(const SweepFlags& f, const sweep::SweepStore& store, std::size_t experiments) {
  slurm::SubmitOptions o;
  if (!f.slurm_config.empty()) slurm::apply_config_file(o, f.slurm_config);
  o.job_name = "warpsim-sweep";
  if (!f.partition.empty()) o.partition = f.partition;
  if (!f.time_limit.empty()) o.time_limit = f.time_limit;
  if (!f.account.empty()) o.account = f.account;
  o.output_dir = store.dir() + "/slurm";
  o.nodes = 1;
  o.ntasks_per_node = 1;
  o.array_size = static_cast<std::int64_t>(experiments);
  o.array_throttle = f.jobs;
  o.launcher = slurm::Launcher::kNone;  // each task is one process that starts its own `warpsim run`
  o.warpsim_binary = sweep::self_executable();
  o.command = {
      "--log-level", "warn", "sweep", "--out", store.dir(), "--task", std::string(slurm::kTaskPlaceholder)};
  for (const auto& flag : f.run_flags) o.command.push_back("--run-flag=" + flag);
  if (f.no_hdf5) o.command.push_back("--no-hdf5");
  const std::string script = slurm::render_sbatch_script(o);
  if (f.dry_run) {
    std::cout << script;
    return 0;
  }
  try {
    const auto result = slurm::submit(o, script);
    std::cerr << "warpsim: submitted sweep as array job " << result.job_id << " (" << experiments
              << " tasks, at most " << f.jobs << " at once; index " << store.index_csv() << ")\n";
    std::cout << result.job_id << '\n';
  } catch (const std::runtime_error& e) {
    std::cerr << "warpsim: error: " << e.what() << '\n';
    return 1;
  }
  return 0;
}

// --in-process K: the experiments not done yet, K at a time in one engine each (CompositeModel).
sweep::RunnerResult run_batches(const sweep::SweepStore& store,
                                const std::vector<sweep::ManifestEntry>& manifest, int k) {
  sweep::RunnerResult result;
  result.total = manifest.size();
  std::vector<const sweep::ManifestEntry*> todo;
  for (const auto& e : manifest) {
    if (store.is_done(e.id)) {
      ++result.skipped;
    } else {
      todo.push_back(&e);
    }
  }
  for (std::size_t first = 0; first < todo.size(); first += static_cast<std::size_t>(k)) {
    const std::size_t last = std::min(todo.size(), first + static_cast<std::size_t>(k));
    std::vector<spec::ExperimentSpec> specs;
    for (std::size_t i = first; i < last; ++i)
      specs.push_back(spec::load_experiment_spec(store.experiment_path(todo[i]->id)));
    const auto values = sweep::run_in_process(
        specs, specs.front().simulation().seed() ? specs.front().simulation().seed() : 1);
    for (std::size_t i = first; i < last; ++i) {
      std::string summary;
      for (const auto& [key, value] : values[i - first]) summary += key + ": " + value + "\n";
      store.record(todo[i]->id, 0, summary, "");
      ++result.ran;
    }
    store.write_index(manifest);
    std::cerr << "sweep --in-process: " << (result.skipped + result.ran) << "/" << result.total << " done\n";
  }
  return result;
}

int run_sweep(const SweepFlags& f, const CommandEnv& env, CLI::App& cmd) {
  if (env.ranks != 1) throw UsageError("sweep runs as one process; do not start it under mpiexec/srun");
  if (f.in_process < 0 || f.in_process > 1024) throw UsageError("--in-process must be in [1, 1024]");
  if (f.in_process > 0 && f.slurm) throw UsageError("--in-process and --slurm do not combine");
  if (f.jobs < 1 || f.jobs > 1024)
    throw UsageError("--jobs must be in [1, 1024] (got " + std::to_string(f.jobs) + ")");
  const bool slurm_flags = !f.partition.empty() || !f.time_limit.empty() || !f.account.empty() ||
                           !f.slurm_config.empty() || f.dry_run;
  if (slurm_flags && !f.slurm)
    throw UsageError("--partition/--time/--account/--slurm-config/--dry-run need --slurm");
  sweep::RunnerOptions options;
  options.jobs = f.jobs;
  options.run_flags = f.run_flags;
  options.progress = !f.no_progress;
  options.hdf5 = !f.no_hdf5;
  for (const auto& flag : f.run_flags) {
    if (flag.rfind("--", 0) != 0)
      throw UsageError("--run-flag: '" + flag + "' is not a flag (write --run-flag=--sync=sequential)");
  }

  // Per-task and index-only modes work from DIR's manifest: the spec file is not needed (or read) again.
  if (f.task >= 0 || f.index_only) {
    if (!f.spec_path.empty()) throw UsageError("--task/--index take no SPEC (they read DIR/manifest.tsv)");
    if (f.out_dir.empty()) throw UsageError("--out is required");
    const sweep::SweepStore store(absolute(f.out_dir));
    const auto manifest = store.read_manifest();
    if (f.index_only) {
      store.write_index(manifest);
      std::cout << store.index_csv() << '\n';
      return 0;
    }
    if (static_cast<std::size_t>(f.task) >= manifest.size()) {
      throw UsageError("--task: " + std::to_string(f.task) + " is not an experiment of this sweep (0.." +
                       std::to_string(manifest.size() - 1) + ")");
    }
    return sweep::run_one(store, manifest, static_cast<std::size_t>(f.task), options);
  }

  if (f.spec_path.empty()) throw UsageError("SPEC is required (a SweepSpec file)");
  const spec::Sweep sweep = spec::load_sweep(f.spec_path);
  if (f.list) return list_sweep(sweep);
  if (f.out_dir.empty()) throw UsageError("--out is required");
  const sweep::SweepStore store(absolute(f.out_dir));
  const auto manifest = store.prepare(sweep);
  if (f.slurm) return submit_sweep(f, store, manifest.size());
  (void)cmd;

  const auto start = std::chrono::steady_clock::now();
  const auto result = f.in_process > 0 ? run_batches(store, manifest, f.in_process)
                                       : sweep::run_local(store, manifest, options, std::cerr);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  io::KeyValueReport report;
  report.add("sweep", sweep.name);
  report.add("experiments", static_cast<std::uint64_t>(result.total));
  report.add("skipped", static_cast<std::uint64_t>(result.skipped));
  report.add("ran", static_cast<std::uint64_t>(result.ran));
  report.add("failed", static_cast<std::uint64_t>(result.failed));
  report.add("interrupted", std::string(result.interrupted ? "yes" : "no"));
  report.add("jobs", static_cast<std::uint64_t>(f.jobs));
  report.add("index csv", store.index_csv());
  report.add("index h5", store.index_h5());
  report.add("wall seconds", wall, 3);
  report.add("experiments per minute", wall > 0 ? static_cast<double>(result.ran) * 60.0 / wall : 0.0, 2);
  report.print(std::cout);
  if (result.interrupted) return 130;
  return result.failed == 0 ? 0 : 1;
}

std::function<int()> add_sweep_command(CLI::App& app, const CommandEnv& env) {
  auto f = std::make_shared<SweepFlags>();
  CLI::App* cmd = app.add_subcommand(
      "sweep", "Run a SweepSpec's experiments (K at a time, or as a Slurm job array) into a results index");
  cmd->add_option("SPEC", f->spec_path, "sweep spec (protobuf text format, or JSON)");
  cmd->add_option("--out", f->out_dir, "output folder: experiments, results, logs, index.csv, index.h5");
  cmd->add_option("--jobs,-j", f->jobs, "experiments at once (with --slurm: the array throttle %N)")
      ->capture_default_str();
  cmd->add_flag("--list", f->list, "print the experiments (index, id, name, overrides) and exit");
  cmd->add_flag("--no-progress", f->no_progress, "no progress line on stderr");
  cmd->add_option("--in-process", f->in_process,
                  "experimental: simulate K experiments at a time in one engine in this process (step time "
                  "only; docs/sweeps.md)");
  cmd->add_flag("--no-hdf5", f->no_hdf5, "no per-experiment HDF5 results file (only the text summary)");
  cmd->add_option("--run-flag", f->run_flags,
                  "extra flag for every `warpsim run`, e.g. --run-flag=--sync=sequential (repeatable)");
  cmd->add_option("--task", f->task,
                  "run only experiment N of the sweep in --out (what a Slurm array task runs)");
  cmd->add_flag("--index", f->index_only, "only rebuild --out's index from its result files");
  cmd->add_flag("--slurm", f->slurm,
                "submit as a Slurm job array (one task per experiment) instead of running");
  cmd->add_option("--partition", f->partition, "with --slurm: partition");
  cmd->add_option("--time", f->time_limit, "with --slurm: time limit per task (Slurm syntax)");
  cmd->add_option("--account", f->account, "with --slurm: account");
  cmd->add_option("--slurm-config", f->slurm_config,
                  "with --slurm: `key = value` file as for `warpsim submit --config`");
  cmd->add_flag("--dry-run", f->dry_run, "with --slurm: print the batch script instead of submitting");
  return [f, cmd, env]() -> int {
    if (!cmd->parsed()) return -1;
    return run_sweep(*f, env, *cmd);
  };
}

const CommandRegistrar kRegisterSweep{"sweep", add_sweep_command};

}  // namespace

}  // namespace warpsim::cli
