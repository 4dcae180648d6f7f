// `warpsim status JOBID [--wait SECONDS]` shows a Slurm job's (or every array task's) state and exit code;
// `warpsim cancel JOBID` cancels it. Both are thin front ends over slurm/slurm_client.hpp.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <memory>
#include <stdexcept>

#include "jobs/cli/command_registry.hpp"
#include "jobs/cli/usage_error.hpp"
#include "slurm/slurm_client.hpp"

namespace warpsim::cli {

namespace {

struct StatusFlags {
  std::string job_id;
  double wait_seconds = 0;
  double poll_seconds = 1;
};

void print_records(const std::vector<slurm::JobRecord>& records) {
  std::printf("%-16s %-13s %-6s %s\n", "JOBID", "STATE", "EXIT", "REASON");
  for (const auto& r : records) {
    std::printf("%-16s %-13s %-6s %s\n", r.id.c_str(), r.state.c_str(), r.exit_code.c_str(),
                r.reason.c_str());
  }
  std::fflush(stdout);
}

// Exit codes: 0 job known (with --wait: every record COMPLETED with exit 0:0), 1 unknown job, failed task
// or wait timeout, 2 bad input.
int run_status(const StatusFlags& f, const CommandEnv& env) {
  if (env.ranks != 1) throw UsageError("status runs as one process; do not start it under mpiexec/srun");
  slurm::check_job_id(f.job_id);
  if (!(f.wait_seconds >= 0)) throw UsageError("--wait must be >= 0 seconds");
  if (!(f.poll_seconds > 0)) throw UsageError("--poll must be > 0 seconds");
  try {
    bool timed_out = false;
    const auto records = f.wait_seconds > 0
                             ? slurm::wait_for_job(f.job_id, f.wait_seconds, f.poll_seconds, timed_out)
                             : slurm::query_job(f.job_id);
    if (records.empty()) {
      std::cerr << "warpsim: error: job " << f.job_id
                << " is not known to slurmctld (never existed, or finished longer ago than MinJobAge)\n";
      return 1;
    }
    print_records(records);
    if (f.wait_seconds == 0) return 0;
    if (timed_out) {
      std::cerr << "warpsim: error: job " << f.job_id << " not finished after " << f.wait_seconds << " s\n";
      return 1;
    }
    for (const auto& r : records) {
      if (r.state != "COMPLETED" || r.exit_code != "0:0") return 1;
    }
    return 0;
  } catch (const std::runtime_error& e) {
    std::cerr << "warpsim: error: " << e.what() << '\n';
    return 1;
  }
}

std::function<int()> add_status_command(CLI::App& app, const CommandEnv& env) {
  auto f = std::make_shared<StatusFlags>();
  CLI::App* cmd = app.add_subcommand("status", "Show a Slurm job's state and exit code (every array task)");
  cmd->add_option("job_id", f->job_id, "job id (12) or array task id (12_3)")->required();
  cmd->add_option("--wait", f->wait_seconds,
                  "wait up to this many seconds for the job to end; exit 0 only if every task COMPLETED")
      ->capture_default_str();
  cmd->add_option("--poll", f->poll_seconds, "seconds between polls while waiting")->capture_default_str();
  return [f, cmd, env]() -> int {
    if (!cmd->parsed()) return -1;
    return run_status(*f, env);
  };
}

std::function<int()> add_cancel_command(CLI::App& app, const CommandEnv& env) {
  auto job_id = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("cancel", "Cancel a Slurm job (scancel)");
  cmd->add_option("job_id", *job_id, "job id (12) or array task id (12_3)")->required();
  return [job_id, cmd, env]() -> int {
    if (!cmd->parsed()) return -1;
    if (env.ranks != 1) throw UsageError("cancel runs as one process; do not start it under mpiexec/srun");
    slurm::check_job_id(*job_id);
    try {
      slurm::cancel_job(*job_id);
    } catch (const std::runtime_error& e) {
      std::cerr << "warpsim: error: " << e.what() << '\n';
      return 1;
    }
    std::cerr << "warpsim: cancelled job " << *job_id << '\n';
    return 0;
  };
}

const CommandRegistrar kRegisterStatus{"status", add_status_command};
const CommandRegistrar kRegisterCancel{"cancel", add_cancel_command};

}  // namespace

}  // namespace warpsim::cli
