// What a Slurm submission of a warpsim command line asks for (resources, array, launcher), how options are
// set by name from flags or a `key = value` config file, and their validation.
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

namespace warpsim::slurm {

// How the batch script starts warpsim inside the allocation.
enum class Launcher {
  kSrunPmix,  // srun --mpi=pmix (Slurm starts every rank; the default)
  kMpirun,    // mpirun -np $SLURM_NTASKS (OpenMPI reads the allocation from Slurm)
  kNone,      // run the binary directly: one process (MPI singleton), for 1-task jobs
};

std::string_view to_string(Launcher launcher);

// In command arguments this token is replaced, per array task, by $SLURM_ARRAY_TASK_ID (0 .. array_size-1),
// e.g. `--seed {task}` or `--digest-file out-{task}.txt`. A sweep maps the task id to an experiment this way.
inline constexpr std::string_view kTaskPlaceholder = "{task}";

struct SubmitOptions {
  std::string job_name = "warpsim";
  std::int64_t nodes = 1;
  std::int64_t ntasks_per_node = 1;
  std::int64_t cpus_per_task = 1;
  std::string
      time_limit;         // Slurm syntax (minutes, MM:SS, HH:MM:SS, D-HH[:MM[:SS]]); empty: partition default
  std::string partition;  // empty: cluster default
  std::string account;    // empty: user default
  std::string output_dir = "slurm-out";  // job output files (and the rendered script) go here
  std::int64_t array_size = 0;           // 0: no array; N: tasks 0..N-1
  std::int64_t array_throttle = 0;       // 0: no limit; N: at most N array tasks run at once (`%N`)
  Launcher launcher = Launcher::kSrunPmix;
  bool requeue = true;               // #SBATCH --requeue: a preempted/failed-node job reruns
  std::int64_t signal_seconds = 60;  // USR1 to the batch shell this long before the time limit; 0: none
  bool hold = false;                 // submit held (released with `scontrol release`)
  // warpsim run/phold only: checkpoint directory ({task} allowed). The job passes --checkpoint-dir, and
  // --resume when the directory holds a complete checkpoint (a requeued job continues); USR1 before the
  // time limit asks warpsim for a checkpoint, and a run that stopped at one (exit 3) is requeued.
  std::string checkpoint_dir;
  std::string warpsim_binary;        // absolute path of the warpsim executable the job runs
  std::vector<std::string> command;  // warpsim arguments: subcommand and its flags
};

// Names accepted by set_option and in config files; same spelling as the `warpsim submit` flags.
const std::vector<std::string>& option_keys();

// Sets one option from its textual value; throws std::invalid_argument naming the key on a bad value or
// an unknown key.
void set_option(SubmitOptions& options, std::string_view key, std::string_view value);

// Reads `key = value` lines (blank lines and `#` comments ignored) into `options`. `source` names the file in
// errors, with the line number.
void apply_config(SubmitOptions& options, std::istream& in, const std::string& source);
void apply_config_file(SubmitOptions& options, const std::string& path);

// Throws std::invalid_argument naming the offending option if the combination cannot be submitted.
void validate(const SubmitOptions& options);

}  // namespace warpsim::slurm
