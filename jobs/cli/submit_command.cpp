// `warpsim submit [slurm options] [--dry-run] -- <warpsim subcommand and args>`: renders an sbatch script
// that runs the given warpsim command line (under srun/mpirun for MPI jobs) and submits it; prints the job
// id.
#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>

#include "jobs/cli/command_registry.hpp"
#include "jobs/cli/usage_error.hpp"
#include "jobs/sweep/child_process.hpp"
#include "slurm/sbatch_script.hpp"
#include "slurm/slurm_client.hpp"
#include "slurm/submit_options.hpp"

namespace warpsim::cli {

namespace {

struct SubmitFlags {
  std::string config;
  std::map<std::string, std::string> values;  // option key -> flag value, for flags given
  bool no_requeue = false;
  bool hold = false;
  bool dry_run = false;
  std::vector<std::string> command;
};

int run_submit(const SubmitFlags& f, CLI::App& cmd, const CommandEnv& env) {
  if (env.ranks != 1) throw UsageError("submit runs as one process; do not start it under mpiexec/srun");
  slurm::SubmitOptions o;
  // Precedence: defaults < config file < flags.
  if (!f.config.empty()) slurm::apply_config_file(o, f.config);
  for (const auto& [key, value] : f.values) {
    if (cmd.count("--" + key) > 0) slurm::set_option(o, key, value);
  }
  if (f.no_requeue) o.requeue = false;
  if (f.hold) o.hold = true;
  o.output_dir = std::filesystem::absolute(o.output_dir).lexically_normal().string();
  if (o.output_dir.size() > 1 && o.output_dir.back() == '/') o.output_dir.pop_back();
  o.warpsim_binary = sweep::self_executable();
  o.command = f.command;
  if (!o.command.empty() &&
      (o.command.front() == "submit" || o.command.front() == "status" || o.command.front() == "cancel")) {
    throw UsageError("command: '" + o.command.front() + "' is not a simulation to run in a job");
  }
  const std::string script = slurm::render_sbatch_script(o);  // validates (std::invalid_argument -> exit 2)
  if (f.dry_run) {
    std::cout << script;
    return 0;
  }
  try {
    const auto result = slurm::submit(o, script);
    std::cerr << "warpsim: submitted job " << result.job_id << " (script " << result.script_path
              << ", output " << slurm::output_pattern(o) << ")\n";
    std::cout << result.job_id << '\n';
  } catch (const std::runtime_error& e) {
    std::cerr << "warpsim: error: " << e.what() << '\n';
    return 1;
  }
  return 0;
}

std::function<int()> add_submit_command(CLI::App& app, const CommandEnv& env) {
  auto f = std::make_shared<SubmitFlags>();
  CLI::App* cmd = app.add_subcommand(
      "submit", "Submit a warpsim command line as a Slurm batch job: warpsim submit [options] -- phold ...");
  cmd->add_option("--config", f->config,
                  "file of `key = value` lines with the option names below (flags override it)");
  const std::map<std::string, std::string> help{
      {"job-name", "job name (default warpsim)"},
      {"nodes", "nodes (default 1)"},
      {"ntasks-per-node", "MPI ranks per node (default 1)"},
      {"cpus-per-task", "CPUs per rank (default 1)"},
      {"time", "time limit, Slurm syntax (minutes, HH:MM:SS, D-HH:MM:SS)"},
      {"partition", "partition (default: the cluster's)"},
      {"account", "account to charge"},
      {"output-dir", "directory for job output and the kept script (default slurm-out)"},
      {"array", "job array of N tasks 0..N-1; {task} in the command becomes the task id"},
      {"array-throttle", "at most N array tasks at once (%N)"},
      {"launcher", "srun (srun --mpi=pmix, default) | mpirun | none (one process, no launcher)"},
      {"signal-seconds",
       "send USR1 to the batch shell this long before the time limit (0: never; default 60)"},
      {"checkpoint-dir",
       "run/phold: checkpoint into DIR, resume from it when requeued; USR1 asks for a checkpoint "
       "(docs/checkpoint.md)"},
  };
  for (const auto& key : slurm::option_keys()) {
    if (key == "requeue" || key == "hold") continue;
    cmd->add_option("--" + key, f->values[key], help.at(key));
  }
  cmd->add_flag("--no-requeue", f->no_requeue, "do not let Slurm requeue the job (requeue is on by default)");
  cmd->add_flag("--hold", f->hold, "submit held; release with `scontrol release JOBID`");
  cmd->add_flag("--dry-run", f->dry_run, "print the batch script instead of submitting it");
  cmd->add_option("command", f->command, "after --: the warpsim subcommand and its arguments");
  return [f, cmd, env]() -> int {
    if (!cmd->parsed()) return -1;
    return run_submit(*f, *cmd, env);
  };
}

const CommandRegistrar kRegisterSubmit{"submit", add_submit_command};

}  // namespace

}  // namespace warpsim::cli
