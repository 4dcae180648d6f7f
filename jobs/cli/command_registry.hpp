// Self-registration of warpsim subcommands: each jobs/cli/*_command.cpp registers itself with a static
// CommandRegistrar, so adding a subcommand touches no shared file. `warpsim --help` lists them all.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace warpsim::cli {

struct CommandEnv {
  int rank = 0;   // MPI rank of this process
  int ranks = 1;  // MPI world size
};

// Adds the subcommand to `app`; the returned function runs it if it was the parsed one (returns its exit
// code) or returns -1 if another subcommand was chosen.
using CommandFactory = std::function<std::function<int()>(CLI::App& app, const CommandEnv& env)>;

struct CommandEntry {
  std::string name;
  CommandFactory factory;
};

std::vector<CommandEntry>& command_registry();

struct CommandRegistrar {
  CommandRegistrar(std::string name, CommandFactory factory) {
    command_registry().push_back(CommandEntry{std::move(name), std::move(factory)});
  }
};

}  // namespace warpsim::cli
