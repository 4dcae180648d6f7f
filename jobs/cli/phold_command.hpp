// `warpsim phold`: the PHOLD benchmark on the Time Warp engine, comparable with ROSS's PHOLD.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace warpsim::cli {

// Registers the subcommand; the returned function runs it (after parsing) and returns the exit code.
std::function<int()> add_phold_command(CLI::App& app, int rank, int ranks);

}  // namespace warpsim::cli
