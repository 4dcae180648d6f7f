// Renders the sbatch batch script for a SubmitOptions value: #SBATCH directives, the launcher line with every
// argument shell-quoted, per-array-task substitution of {task}, and the USR1 trap for the checkpoint hook.
#pragma once

#include <string>
#include <string_view>

#include "slurm/submit_options.hpp"

namespace warpsim::slurm {

// POSIX shell quoting: the result is one word that the shell turns back into exactly `arg`.
std::string shell_quote(std::string_view arg);

// Like shell_quote, but every {task} becomes "${SLURM_ARRAY_TASK_ID}" (expanded when the task runs).
std::string shell_quote_with_task(std::string_view arg);

// The job's stdout/stderr path pattern: <output_dir>/<name>-%j.out, or -%A_%a.out for arrays.
std::string output_pattern(const SubmitOptions& options);

// Validates the options (std::invalid_argument naming the option) and returns the whole script.
std::string render_sbatch_script(const SubmitOptions& options);

}  // namespace warpsim::slurm
