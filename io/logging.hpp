// Logging set-up shared by every subcommand: spdlog to stderr, with the MPI rank in each line.
#pragma once

#include <string>

namespace warpsim::io {

// level: trace, debug, info, warn, error, off. Returns false for an unknown level name.
bool setup_logging(const std::string& level, int rank);

}  // namespace warpsim::io
