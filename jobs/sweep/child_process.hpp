// A child process started without a shell, stdout and stderr going to files, that the parent polls and can
// stop. The sweep runner starts `warpsim run` this way, K at a time; the service runs its jobs this way.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace warpsim::sweep {

class ChildProcess {
 public:
  // Starts argv (argv[0] an absolute path) with the environment this process was started with (see
  // slurm::startup_environment: the MPI singleton's variables must not reach a child warpsim). stdout and
  // stderr are truncated and written to the given files. Throws std::runtime_error if it cannot start.
  ChildProcess(const std::vector<std::string>& argv, const std::string& stdout_path,
               const std::string& stderr_path);
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&&) = delete;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  // A child still running when its owner goes away is killed and reaped (no orphans, no zombies).
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  // The exit status once the child has ended (128 + signal when killed), without blocking.
  std::optional<int> poll();
  int wait();
  // SIGTERM, then SIGKILL if still alive after `grace_seconds`; reaps it. Returns the exit status.
  int stop(double grace_seconds = 2.0);

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
};

// Absolute path of the running executable (the warpsim binary re-runs itself for experiments), for commands
// that run elsewhere or later (Slurm scripts, the service's jobs).
std::string self_executable();

// The running executable's image, for children started now on this machine (validate's rows, a local
// sweep's experiments): /proc/self/exe, which execs this very binary even after the file on disk was rebuilt
// or removed, so every row of one run uses the same model (a rebuild during a validation killed its next row:
// "cannot start '.../warpsim (deleted)'").
std::string running_image();

}  // namespace warpsim::sweep
