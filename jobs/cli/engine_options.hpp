// Engine flags shared by every simulating subcommand (--sync, --seed, GVT/throttle knobs, checkpoints). The
// values they fill, and their checks and conversion into an EngineConfig, belong to experiment/
// (engine_settings.hpp); the names below keep the subcommands' spelling.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "experiment/engine_report.hpp"
#include "experiment/engine_settings.hpp"

namespace warpsim::cli {

using experiment::add_engine_report;
using experiment::apply_checkpoint_options;
using experiment::CheckpointOptions;
using experiment::EngineOptions;
using experiment::kCheckpointStopExitCode;
using experiment::to_engine_config;

void add_engine_options(CLI::App& command, EngineOptions& options);

// Checkpoint/restart flags (docs/checkpoint.md); `at_flag` names the time flag (e.g. "--checkpoint-at-ns"),
// in the command's time unit.
void add_checkpoint_options(CLI::App& command, CheckpointOptions& options, const std::string& at_flag);

}  // namespace warpsim::cli
