// The warpsim binary: one subcommand per jobs/cli/*_command.cpp, each registered through
// command_registry.hpp. Every rank parses the same arguments; rank 0 reports errors.
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <functional>
#include <iostream>
#include <vector>

#include "engine/kernel/mpi_session.hpp"
#include "io/hdf5_series_writer.hpp"
#include "io/logging.hpp"
#include "jobs/cli/command_registry.hpp"
#include "jobs/cli/usage_error.hpp"

int main(int argc, char** argv) {
  warpsim::MpiSession mpi(&argc, &argv);
  const int rank = mpi.rank();
  auto fail = [&](const std::string& message, int code) {
    if (rank == 0) std::cerr << "warpsim: error: " << message << '\n';
    return code;
  };

  CLI::App app{"warpsim: parallel discrete-event simulation of HPC clusters and training jobs"};
  app.require_subcommand(1);
  // The project version (CMake's PROJECT_VERSION) and the git revision the build was configured at, the
  // same pair the HDF5 results file stores.
  app.set_version_flag(
      "--version", "warpsim " + warpsim::io::warpsim_version() + " (git " + warpsim::io::git_revision() + ")",
      "print the version and git revision and exit");
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "trace | debug | info | warn | error | off")
      ->capture_default_str();
  std::vector<std::function<int()>> commands;
  const warpsim::cli::CommandEnv env{rank, mpi.size()};
  auto entries = warpsim::cli::command_registry();
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  for (const auto& entry : entries) commands.push_back(entry.factory(app, env));

  // A mistyped subcommand deserves its name in the error, not CLI11's generic "subcommand required".
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    for (const auto* sub : app.get_subcommands({})) known = known || sub->check_name(argv[1]);
    if (!known) {
      std::string names;
      for (const auto* sub : app.get_subcommands({})) names += (names.empty() ? "" : ", ") + sub->get_name();
      return fail(std::string("unknown subcommand '") + argv[1] + "' (available: " + names + ")",
                  warpsim::cli::kUsageExitCode);
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    if (rank == 0) app.exit(e);
    return 0;
  } catch (const CLI::CallForAllHelp& e) {
    if (rank == 0) app.exit(e);
    return 0;
  } catch (const CLI::CallForVersion& e) {
    if (rank == 0) app.exit(e);
    return 0;
  } catch (const CLI::ParseError& e) {
    return fail(e.what(), warpsim::cli::kUsageExitCode);
  }
  if (!warpsim::io::setup_logging(log_level, rank)) {
    return fail("--log-level: unknown level '" + log_level + "'", warpsim::cli::kUsageExitCode);
  }

  try {
    for (auto& command : commands) {
      const int code = command();
      if (code >= 0) return code;
    }
    return fail("no subcommand given", warpsim::cli::kUsageExitCode);
  } catch (const warpsim::cli::UsageError& e) {
    return fail(e.what(), warpsim::cli::kUsageExitCode);
  } catch (const std::invalid_argument& e) {
    return fail(e.what(), warpsim::cli::kUsageExitCode);
  } catch (const std::exception& e) {
    if (rank == 0 || mpi.size() > 1)
      std::cerr << "warpsim: fatal (rank " << rank << "): " << e.what() << '\n';
    // A lone rank has no peer to stop: the error line is all (MPI_Abort would add Open MPI's banner).
    if (mpi.size() == 1) return 1;
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
  }
}
