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

// The environment this process was started with (/proc/self/environ), without what MPI_Init added since:
// the warpsim binary initializes MPI (as a singleton) before any subcommand runs, and OpenMPI then sets
// OMPI_MCA_ess=singleton, PMIX_* and the like. sbatch exports the submitter's environment into the job,
// where those variables break `mpirun`; the user's own settings (OMPI_MCA_btl=...) must still pass.
std::vector<std::string> startup_environment();

// argv[0] is looked up in PATH and runs with startup_environment(). Throws std::runtime_error if it cannot
// be started (e.g. not installed).
ProcessResult run_process(const std::vector<std::string>& argv);

}  // namespace warpsim::slurm
