// Subprocess calls to sbatch / scontrol / scancel and parsing of their output (see slurm_client.hpp).
#include "slurm/slurm_client.hpp"

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <stdexcept>
#include <thread>

#include "slurm/process.hpp"

namespace warpsim::slurm {

namespace {

std::string first_line(const std::string& text) {
  const auto start = text.find_first_not_of("\n");
  if (start == std::string::npos) return "(no message)";
  return text.substr(start, text.find('\n', start) - start);
}

[[noreturn]] void tool_failed(const std::string& tool, const ProcessResult& r) {
  throw std::runtime_error(tool + " failed (exit " + std::to_string(r.exit_code) +
                           "): " + first_line(r.err.empty() ? r.out : r.err));
}

// Value of ` Key=` in one scontrol -o line, up to the next space ("" when absent).
std::string field(std::string_view line, std::string_view key) {
  const std::string needle = std::string(key) + "=";
  std::size_t pos = 0;
  while ((pos = line.find(needle, pos)) != std::string_view::npos) {
    if (pos == 0 || line[pos - 1] == ' ') {
      const auto begin = pos + needle.size();
      const auto end = line.find(' ', begin);
      return std::string(line.substr(begin, end == std::string_view::npos ? end : end - begin));
    }
    pos += needle.size();
  }
  return {};
}

}  // namespace

SubmitResult submit(const SubmitOptions& options, const std::string& script) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(options.output_dir, ec);
  if (ec) throw std::runtime_error("output-dir: cannot create '" + options.output_dir + "': " + ec.message());
  // A unique temporary name, renamed after the job id is known: concurrent submissions never collide.
  std::string tmp = (fs::path(options.output_dir) / ("." + options.job_name + ".sbatch.XXXXXX")).string();
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw std::runtime_error("output-dir: cannot create a file in '" + options.output_dir + "'");
  ::close(fd);
  {
    std::ofstream out(tmp);
    out << script;
    if (!out) throw std::runtime_error("cannot write the batch script to '" + tmp + "'");
  }
  ProcessResult r;
  try {
    r = run_process({"sbatch", "--parsable", tmp});
  } catch (...) {
    fs::remove(tmp, ec);
    throw;
  }
  if (r.exit_code != 0) {
    fs::remove(tmp, ec);
    tool_failed("sbatch", r);
  }
  // --parsable prints "jobid" or "jobid;cluster".
  const std::string line = first_line(r.out);
  const std::string id = line.substr(0, line.find(';'));
  if (!std::regex_match(id, std::regex(R"(\d+)"))) {
    throw std::runtime_error("sbatch printed no job id (output: " + line + ")");
  }
  const fs::path kept = fs::path(options.output_dir) / (options.job_name + "-" + id + ".sbatch");
  fs::rename(tmp, kept, ec);
  return SubmitResult{id, ec ? tmp : kept.string()};
}

void check_job_id(std::string_view job_id) {
  static const std::regex id_re(R"(\d+(_\d+)?)");
  if (!std::regex_match(job_id.begin(), job_id.end(), id_re)) {
    throw std::invalid_argument("job id: expected a Slurm job id like 12 or 12_3, got '" +
                                std::string(job_id) + "'");
  }
}

std::vector<JobRecord> parse_scontrol_records(std::string_view text) {
  std::vector<JobRecord> records;
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    const std::string job_id = field(line, "JobId");
    if (job_id.empty()) continue;
    JobRecord r;
    const std::string array_job = field(line, "ArrayJobId");
    const std::string array_task = field(line, "ArrayTaskId");
    if (array_job.empty() || array_task.empty()) {
      r.id = job_id;
    } else if (array_task.find_first_not_of("0123456789") == std::string::npos) {
      r.id = array_job + "_" + array_task;
    } else {
      r.id = array_job + "_[" + array_task + "]";  // tasks not started yet, e.g. 1-3%2
    }
    r.name = field(line, "JobName");
    r.state = field(line, "JobState");
    r.reason = field(line, "Reason");
    r.exit_code = field(line, "ExitCode");
    records.push_back(std::move(r));
  }
  // scontrol lists the newest task first; show tasks in id order, the not-yet-started remainder last.
  auto order = [](const JobRecord& r) {
    const auto sep = r.id.find('_');
    if (sep == std::string::npos) return std::pair<int, long long>{0, 0};
    if (r.id[sep + 1] == '[') return std::pair<int, long long>{2, 0};
    return std::pair<int, long long>{1, std::stoll(r.id.substr(sep + 1))};
  };
  std::stable_sort(records.begin(), records.end(),
                   [&](const JobRecord& a, const JobRecord& b) { return order(a) < order(b); });
  return records;
}

bool is_terminal_state(std::string_view state) {
  for (const std::string_view s : {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED",
                                   "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE"}) {
    if (state == s) return true;
  }
  return false;
}

std::vector<JobRecord> query_job(const std::string& job_id) {
  check_job_id(job_id);
  const ProcessResult r = run_process({"scontrol", "show", "job", "-o", job_id});
  if (r.exit_code != 0) {
    if (r.err.find("Invalid job id") != std::string::npos) return {};
    tool_failed("scontrol", r);
  }
  return parse_scontrol_records(r.out);
}

std::vector<JobRecord> wait_for_job(const std::string& job_id, double timeout_seconds, double poll_seconds,
                                    bool& timed_out) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_seconds);
  while (true) {
    auto records = query_job(job_id);
    bool done = !records.empty();
    for (const auto& r : records) done = done && is_terminal_state(r.state);
    timed_out = !done && Clock::now() >= deadline;
    if (done || timed_out) return records;
    std::this_thread::sleep_for(std::chrono::duration<double>(poll_seconds));
  }
}

void cancel_job(const std::string& job_id) {
  check_job_id(job_id);
  const ProcessResult r = run_process({"scancel", job_id});
  if (r.exit_code != 0) tool_failed("scancel", r);
}

}  // namespace warpsim::slurm
