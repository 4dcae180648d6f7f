// Signal flag behind checkpoint_signal.hpp. A signal handler may only touch a volatile sig_atomic_t, hence
// the one file-scope variable.
#include "engine/kernel/checkpoint_signal.hpp"

#include <csignal>

namespace warpsim {

namespace {
volatile std::sig_atomic_t g_checkpoint_signal = 0;

extern "C" void on_checkpoint_signal(int) {
  g_checkpoint_signal = 1;
}
}  // namespace

void install_checkpoint_signal_handlers() {
  struct sigaction action {};
  action.sa_handler = on_checkpoint_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGUSR1, &action, nullptr);
}

bool checkpoint_signal_received() {
  return g_checkpoint_signal != 0;
}

void clear_checkpoint_signal() {
  g_checkpoint_signal = 0;
}

}  // namespace warpsim
