// Runs a Slurm client tool (sbatch, scontrol, scancel) as a subprocess and captures its stdout, stderr and
// exit status, so errors can be reported with the tool's own message.
#pragma once

#include <string>
#include <vector>

namespace warpsim::slurm {

struct ProcessResult {
  int exit_code = -1;  // the exit status, or 128 + signal number if it was killed
  std::string out;
  std::string err;
};

// argv[0] is looked up in PATH. Throws std::runtime_error if it cannot be started (e.g. not installed).
ProcessResult run_process(const std::vector<std::string>& argv);

}  // namespace warpsim::slurm
