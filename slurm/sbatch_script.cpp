// Batch-script rendering (see sbatch_script.hpp).
#include "slurm/sbatch_script.hpp"

#include <sstream>

namespace warpsim::slurm {

std::string shell_quote(std::string_view arg) {
  // Plain words stay readable; everything else goes in single quotes, where only ' itself needs care.
  const bool plain = !arg.empty() && arg.find_first_not_of(
                                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                         "0123456789-_./:=,+@%") == std::string_view::npos;
  if (plain) return std::string(arg);
  std::string out = "'";
  for (const char c : arg) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

std::string shell_quote_with_task(std::string_view arg) {
  std::string out;
  std::size_t pos = 0;
  while (true) {
    const auto hit = arg.find(kTaskPlaceholder, pos);
    const auto piece = arg.substr(pos, hit == std::string_view::npos ? std::string_view::npos : hit - pos);
    if (!piece.empty()) out += shell_quote(piece);
    if (hit == std::string_view::npos) break;
    out += "\"${SLURM_ARRAY_TASK_ID}\"";
    pos = hit + kTaskPlaceholder.size();
  }
  return out.empty() ? "''" : out;
}

std::string output_pattern(const SubmitOptions& o) {
  return o.output_dir + "/" + o.job_name + (o.array_size > 0 ? "-%A_%a.out" : "-%j.out");
}

std::string render_sbatch_script(const SubmitOptions& o) {
  validate(o);
  std::ostringstream s;
  s << "#!/bin/bash\n"
    << "# Rendered by `warpsim submit`; runs one warpsim command line in a Slurm allocation.\n"
    << "#SBATCH --job-name=" << o.job_name << '\n'
    << "#SBATCH --nodes=" << o.nodes << '\n'
    << "#SBATCH --ntasks-per-node=" << o.ntasks_per_node << '\n'
    << "#SBATCH --cpus-per-task=" << o.cpus_per_task << '\n';
  if (!o.time_limit.empty()) s << "#SBATCH --time=" << o.time_limit << '\n';
  if (!o.partition.empty()) s << "#SBATCH --partition=" << o.partition << '\n';
  if (!o.account.empty()) s << "#SBATCH --account=" << o.account << '\n';
  if (o.array_size > 0) {
    s << "#SBATCH --array=0-" << (o.array_size - 1);
    if (o.array_throttle > 0) s << '%' << o.array_throttle;
    s << '\n';
  }
  s << "#SBATCH --output=" << output_pattern(o) << '\n';
  s << (o.requeue ? "#SBATCH --requeue\n" : "#SBATCH --no-requeue\n");
  if (o.signal_seconds > 0) s << "#SBATCH --signal=B:USR1@" << o.signal_seconds << '\n';
  if (o.hold) s << "#SBATCH --hold\n";
  s << "set -uo pipefail\n\n";

  s << "cmd=(";
  switch (o.launcher) {
    case Launcher::kSrunPmix:
      s << "srun --mpi=pmix";
      break;
    case Launcher::kMpirun:
      s << "mpirun -np \"${SLURM_NTASKS}\"";
      break;
    case Launcher::kNone:
      break;
  }
  if (o.launcher != Launcher::kNone) s << ' ';
  s << shell_quote(o.warpsim_binary);
  for (const auto& arg : o.command) s << ' ' << shell_quote_with_task(arg);
  s << ")\n";
  if (o.launcher == Launcher::kMpirun) {
    // OpenMPI refuses root without this flag; clusters run jobs as users, containers (CI) as root.
    s << "if [[ $(id -u) -eq 0 ]]; then cmd=(\"${cmd[0]}\" --allow-run-as-root \"${cmd[@]:1}\"); fi\n";
  }
  const bool checkpoints = !o.checkpoint_dir.empty();
  if (checkpoints) {
    // docs/checkpoint.md: the run checkpoints into the directory; a requeued (or resubmitted) job continues
    // from the newest complete checkpoint there. Incomplete ones have a temporary name and no manifest.
    s << "ckpt_dir=" << shell_quote_with_task(o.checkpoint_dir) << "\n"
      << "cmd+=(--checkpoint-dir \"$ckpt_dir\")\n"
      << "if compgen -G \"$ckpt_dir/ckpt-*/manifest\" >/dev/null; then cmd+=(--resume \"$ckpt_dir\"); fi\n";
  }
  s << "echo \"warpsim-slurm: job ${SLURM_ARRAY_JOB_ID:-$SLURM_JOB_ID} task ${SLURM_ARRAY_TASK_ID:-none}"
       " restart ${SLURM_RESTART_COUNT:-0} on $(hostname): ${cmd[*]}\" >&2\n\n";

  // With --signal=B:... the signal reaches only this shell; bash runs a trap only between commands, so the
  // command runs in the background and the shell waits. With checkpoints the trap passes USR1 on to the
  // launcher (srun and mpirun forward it to every rank), and warpsim writes a checkpoint and exits 3.
  // Without, warpsim has no USR1 handler (the signal would kill it), so the shell only logs it.
  s << "on_usr1() {\n";
  if (checkpoints) {
    s << "  echo \"warpsim-slurm: USR1: time limit is near: asking warpsim for a checkpoint\" >&2\n"
      << "  kill -USR1 \"$child\" 2>/dev/null || true\n";
  } else {
    s << "  echo \"warpsim-slurm: USR1: time limit is near (no checkpoint-dir: the run continues)\" >&2\n";
  }
  s << "}\n"
    << "trap on_usr1 USR1\n";
  if (checkpoints) {
    // Preemption sends SIGTERM to every process of the job: the ranks checkpoint; the shell must wait.
    s << "trap 'echo \"warpsim-slurm: TERM: preempted or cancelled: warpsim checkpoints\" >&2' TERM\n";
  }
  s << "\"${cmd[@]}\" &\n"
    << "child=$!\n"
    << "while true; do\n"
    << "  wait \"$child\"\n"
    << "  rc=$?\n"
    << "  # wait returns >128 when a trapped signal interrupts it while the command still runs.\n"
    << "  if ((rc > 128)) && kill -0 \"$child\" 2>/dev/null; then continue; fi\n"
    << "  break\n"
    << "done\n";
  if (checkpoints) {
    s << "if ((rc == 3)); then\n"
      << "  echo \"warpsim-slurm: stopped at a checkpoint in $ckpt_dir\" >&2\n";
    if (o.requeue) {
      // A preempted job is requeued by Slurm itself; one stopped before its time limit asks for it.
      s << "  scontrol requeue \"$SLURM_JOB_ID\" && echo \"warpsim-slurm: requeued; it resumes from the "
           "checkpoint\" >&2\n";
    }
    s << "fi\n";
  }
  s << "exit \"$rc\"\n";
  return s.str();
}

}  // namespace warpsim::slurm
