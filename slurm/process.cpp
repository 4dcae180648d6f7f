// posix_spawn with two pipes drained by poll(), so neither stream can fill up and block the child.
#include "slurm/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <utility>

extern char** environ;

namespace warpsim::slurm {

namespace {

// Owns a file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept {
    reset(other.release());
    return *this;
  }
  ~Fd() { reset(); }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

std::array<Fd, 2> make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  return {Fd(fds[0]), Fd(fds[1])};
}

}  // namespace

std::vector<std::string> startup_environment() {
  std::ifstream in("/proc/self/environ", std::ios::binary);
  std::vector<std::string> env;
  std::string entry;
  while (std::getline(in, entry, '\0')) {
    if (!entry.empty()) env.push_back(entry);
  }
  if (env.empty()) {  // no /proc (not Linux): the current environment is the best there is
    for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  }
  return env;
}

ProcessResult run_process(const std::vector<std::string>& argv) {
  if (argv.empty()) throw std::invalid_argument("run_process: empty argv");
  auto out_pipe = make_pipe();
  auto err_pipe = make_pipe();

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1].get(), 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1].get(), 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::vector<std::string> env_strings = startup_environment();
  std::vector<char*> env;
  for (const auto& e : env_strings) env.push_back(const_cast<char*>(e.c_str()));
  env.push_back(nullptr);
  pid_t pid = 0;
  // posix_spawnp searches PATH of this process, which MPI_Init does not change.
  const int rc = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot run '" + argv[0] + "': " + std::strerror(rc));
  out_pipe[1].reset();
  err_pipe[1].reset();

  ProcessResult result;
  std::array<pollfd, 2> fds{pollfd{out_pipe[0].get(), POLLIN, 0}, pollfd{err_pipe[0].get(), POLLIN, 0}};
  std::array<std::string*, 2> sinks{&result.out, &result.err};
  int open_streams = 2;
  char buffer[4096];
  while (open_streams > 0) {
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        fds[i].fd = -1;  // poll() ignores negative descriptors
        --open_streams;
      }
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  // posix_spawnp reports a missing program as exit 127 from the child on glibc.
  if (result.exit_code == 127 && result.out.empty() && result.err.empty()) {
    throw std::runtime_error("cannot run '" + argv[0] + "' (not found in PATH; is slurm-wlm installed?)");
  }
  return result;
}

}  // namespace warpsim::slurm
