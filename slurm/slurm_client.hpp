// Talks to Slurm through its client tools: submit a rendered script (sbatch --parsable), read job state
// (scontrol show job; there is no accounting database to ask sacct), cancel (scancel) and wait for the end.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "slurm/submit_options.hpp"

namespace warpsim::slurm {

struct SubmitResult {
  std::string job_id;       // as sbatch printed it (the array job id for arrays)
  std::string script_path;  // the rendered script kept next to the outputs: <output_dir>/<name>-<id>.sbatch
};

// Writes `script` into options.output_dir (created if missing) and submits it. Throws std::runtime_error
// with sbatch's own message if Slurm refuses it.
SubmitResult submit(const SubmitOptions& options, const std::string& script);

// One job, or one array task (array tasks not yet started are one record, e.g. 12_[2-3%2]).
struct JobRecord {
  std::string id;         // 12, or 12_3 for an array task
  std::string name;       // JobName
  std::string state;      // PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, ...
  std::string reason;     // why it pends or failed (None when nothing to say)
  std::string exit_code;  // "exit:signal" as Slurm reports it, e.g. 0:0
};

// Throws std::invalid_argument unless `job_id` looks like 12 or 12_3.
void check_job_id(std::string_view job_id);

// Parses `scontrol show job -o` output (one job record per line).
std::vector<JobRecord> parse_scontrol_records(std::string_view text);

// A job in this state will not change any more (unless requeued by an administrator).
bool is_terminal_state(std::string_view state);

// All records of a job (every task of an array). Empty when slurmctld no longer knows the id (finished
// longer ago than MinJobAge). Throws std::runtime_error if scontrol fails otherwise.
std::vector<JobRecord> query_job(const std::string& job_id);

// Polls query_job every `poll_seconds` until every record is terminal or `timeout_seconds` pass; returns
// the last records and sets `timed_out`.
std::vector<JobRecord> wait_for_job(const std::string& job_id, double timeout_seconds, double poll_seconds,
                                    bool& timed_out);

// scancel; throws std::runtime_error with scancel's message on failure.
void cancel_job(const std::string& job_id);

}  // namespace warpsim::slurm
