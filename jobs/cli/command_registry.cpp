// The subcommand registry (see command_registry.hpp).
#include "jobs/cli/command_registry.hpp"

namespace warpsim::cli {

std::vector<CommandEntry>& command_registry() {
  static std::vector<CommandEntry> registry;  // function-local: safe from static-initialization order
  return registry;
}

}  // namespace warpsim::cli
