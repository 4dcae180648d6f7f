// The service's job table (see job_manager.hpp).
#include "jobs/serve/job_manager.hpp"

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "experiment/spec/experiment_spec.hpp"
#include "experiment/spec/sweep_spec.hpp"
#include "jobs/sweep/sweep_store.hpp"
#include "slurm/process.hpp"
#include "slurm/sbatch_script.hpp"
#include "slurm/slurm_client.hpp"

namespace warpsim::serve {

namespace fs = std::filesystem;

namespace {

spec::ServiceReply error(const std::string& message) {
  spec::ServiceReply reply;
  reply.set_ok(false);
  reply.set_error(message);
  return reply;
}

// A submitted experiment may not point at files: the service reads none that a client names.
void check_self_contained(const spec::ExperimentSpec& e, const std::string& where) {
  if (e.cluster_source_case() == spec::ExperimentSpec::kClusterFile)
    throw std::invalid_argument(where +
                                "cluster_file: not accepted by the service (send the cluster inline)");
  if (e.job_source_case() == spec::ExperimentSpec::kJobFile)
    throw std::invalid_argument(where + "job_file: not accepted by the service (send the job inline)");
}

bool valid_id(const std::string& id) {
  return id.size() >= 2 && id.size() <= 20 && id[0] == 'j' &&
         id.find_first_not_of("0123456789", 1) == std::string::npos;
}

void add_values(spec::ResultRow& row, const std::map<std::string, std::string>& values) {
  for (const auto& key : sweep::index_metric_keys()) {
    if (const auto it = values.find(key); it != values.end()) (*row.mutable_values())[key] = it->second;
  }
  if (const auto it = values.find("state digest"); it != values.end())
    (*row.mutable_values())["state digest"] = it->second;
}

std::uint64_t id_number(const std::string& id) {
  return std::stoull(id.substr(1));  // valid_id: at most 19 digits, so it fits
}

constexpr const char* kRecordFile = "job.state";  // in each job's folder
constexpr const char* kNextIdFile = "next-id";    // in the state folder

}  // namespace

JobManager::JobManager(JobManagerOptions options) : options_(std::move(options)) {
  fs::create_directories(options_.state_dir + "/jobs");
  load_history();
}

void JobManager::save(const Job& job) {
  std::ostringstream out;
  out << "kind " << job.kind << "\nstate " << job.state << "\nexit_code " << job.exit_code << "\njobs "
      << job.jobs << "\nslurm_job_id " << job.slurm_job_id << '\n';
  try {
    sweep::write_file_atomically(job.dir + "/" + kRecordFile, out.str());
  } catch (const std::exception&) {
    // A full or read-only disk must not stop the service; the next change writes the record again.
  }
}

void JobManager::load_history() {
  const std::string jobs_dir = options_.state_dir + "/jobs";
  std::uint64_t highest = 0;
  for (const auto& entry : fs::directory_iterator(jobs_dir)) {
    const std::string id = entry.path().filename().string();
    if (!valid_id(id)) continue;
    highest = std::max(highest, id_number(id));
    std::error_code ec;
    if (!entry.is_directory(ec)) continue;
    auto job = std::make_unique<Job>();
    job->id = id;
    job->dir = jobs_dir + "/" + id;
    std::map<std::string, std::string> record;
    if (fs::exists(job->dir + "/" + kRecordFile, ec)) {
      std::string text;
      try {
        text = sweep::read_text_file(job->dir + "/" + kRecordFile);
      } catch (const std::exception&) {
        // unreadable: handled like a folder without a record
      }
      std::istringstream in(text);
      for (std::string line; std::getline(in, line);) {
        const auto space = line.find(' ');
        if (space != std::string::npos) record[line.substr(0, space)] = line.substr(space + 1);
      }
    }
    job->kind = record.count("kind") ? record["kind"] : "";
    if (job->kind.empty()) {  // no record (a folder from before records, or a crash while submitting)
      if (fs::exists(job->dir + "/experiment.spec", ec)) job->kind = "experiment";
      if (fs::exists(job->dir + "/sweep.spec", ec)) job->kind = "sweep";
    }
    if (job->kind != "experiment" && job->kind != "sweep") continue;
    job->spec_path = job->dir + "/" + job->kind + ".spec";
    job->state = record.count("state") ? record["state"] : "unknown";
    try {
      job->exit_code = record.count("exit_code") ? std::stoi(record["exit_code"]) : 0;
      job->jobs = record.count("jobs") ? static_cast<std::uint32_t>(std::stoul(record["jobs"])) : 1;
    } catch (const std::exception&) {
      job->state = "unknown";
    }
    job->slurm_job_id = record.count("slurm_job_id") ? record["slurm_job_id"] : "";
    if (job->slurm_job_id.empty() && (job->state == "queued" || job->state == "running")) {
      // Its child stopped with the previous service; its partial output stays in stdout.part.
      job->state = "interrupted";
      job->exit_code = -1;
      save(*job);
    }
    jobs_.emplace(id, std::move(job));
  }
  next_id_ = highest + 1;
  std::error_code ec;
  if (fs::exists(options_.state_dir + "/" + kNextIdFile, ec)) {
    try {
      next_id_ = std::max<std::uint64_t>(
          next_id_, std::stoull(sweep::read_text_file(options_.state_dir + "/" + kNextIdFile)));
    } catch (const std::exception&) {
      // unreadable counter: the folder names alone decide
    }
  }
}

std::string JobManager::allocate_job_dir() {
  for (;; ++next_id_) {
    const std::string id = "j" + std::to_string(next_id_);
    // create_directory is false when the folder exists (made by hand, or by another service on this state
    // folder): that id is skipped, never reused.
    if (!fs::create_directory(options_.state_dir + "/jobs/" + id)) continue;
    ++next_id_;
    sweep::write_file_atomically(options_.state_dir + "/" + kNextIdFile, std::to_string(next_id_) + "\n");
    return id;
  }
}

JobManager::~JobManager() = default;  // each running ChildProcess stops its child

spec::ServiceReply JobManager::handle(const spec::ServiceRequest& request) {
  tick();
  try {
    switch (request.kind_case()) {
      case spec::ServiceRequest::kSubmit:
        return submit(request.submit());
      case spec::ServiceRequest::kStatus:
        return status(request.status().id());
      case spec::ServiceRequest::kCancel:
        return cancel(request.cancel().id());
      case spec::ServiceRequest::kListResults:
        return list_results();
      case spec::ServiceRequest::KIND_NOT_SET:
        break;
    }
    return error("request: no kind (submit, status, cancel or list_results)");
  } catch (const std::invalid_argument& e) {
    return error(e.what());
  } catch (const std::exception& e) {
    return error(std::string("internal: ") + e.what());
  }
}

spec::ServiceReply JobManager::submit(const spec::SubmitRequest& request) {
  if (jobs_.size() >= options_.max_jobs)
    return error("submit: the service holds " + std::to_string(jobs_.size()) + " jobs, its limit");
  if (request.jobs() > 256)
    return error("submit.jobs: at most 256 (got " + std::to_string(request.jobs()) + ")");
  auto job = std::make_unique<Job>();
  job->jobs = std::max<std::uint32_t>(1, request.jobs());
  std::string text;
  switch (request.spec_case()) {
    case spec::SubmitRequest::kExperiment: {
      job->kind = "experiment";
      const auto e = spec::parse_experiment_spec(request.experiment(), "(submitted)");
      check_self_contained(e, "experiment spec: ");
      (void)spec::validated(e);
      text = request.experiment();
      break;
    }
    case spec::SubmitRequest::kSweep: {
      job->kind = "sweep";
      const auto s = spec::parse_sweep_spec(request.sweep(), "(submitted)");
      if (s.base_source_case() != spec::SweepSpec::kBase)
        return error(
            "sweep spec: base: the service needs the base experiment inline (base_file is not accepted)");
      check_self_contained(s.base(), "sweep spec: base.");
      (void)spec::expand_sweep(s, s.base());
      text = request.sweep();
      break;
    }
    case spec::SubmitRequest::SPEC_NOT_SET:
      return error("submit: no spec (experiment or sweep)");
  }
  job->id = allocate_job_dir();
  job->dir = options_.state_dir + "/jobs/" + job->id;
  job->spec_path = job->dir + "/" + job->kind + ".spec";
  sweep::write_file_atomically(job->spec_path, text);
  save(*job);
  Job& ref = *job;
  jobs_.emplace(job->id, std::move(job));
  if (options_.slurm) {
    try {
      start(ref);
    } catch (const std::exception&) {
      ref.state = "failed";
      ref.exit_code = -1;
      save(ref);
      throw;
    }
    save(ref);
  } else {
    queue_.push_back(&ref);
    tick();
  }
  spec::ServiceReply reply;
  reply.set_ok(true);
  *reply.add_jobs() = describe(ref);
  return reply;
}

void JobManager::start(Job& job) {
  const std::string exe = options_.warpsim_binary;
  if (options_.slurm) {
    if (job.kind == "experiment") {
      slurm::SubmitOptions o;
      o.job_name = "warpsim-" + job.id;
      o.output_dir = job.dir + "/slurm";
      o.launcher = slurm::Launcher::kNone;
      o.warpsim_binary = exe;
      o.partition = options_.slurm_partition;
      o.time_limit = options_.slurm_time;
      o.account = options_.slurm_account;
      o.command = {"--log-level", "warn", "run", job.spec_path, "--progress-seconds", "0"};
      job.slurm_job_id = slurm::submit(o, slurm::render_sbatch_script(o)).job_id;
    } else {
      std::vector<std::string> argv{exe,
                                    "--log-level",
                                    "warn",
                                    "sweep",
                                    job.spec_path,
                                    "--out",
                                    job.dir + "/out",
                                    "--jobs",
                                    std::to_string(job.jobs),
                                    "--slurm"};
      if (!options_.slurm_partition.empty())
        argv.insert(argv.end(), {"--partition", options_.slurm_partition});
      if (!options_.slurm_time.empty()) argv.insert(argv.end(), {"--time", options_.slurm_time});
      if (!options_.slurm_account.empty()) argv.insert(argv.end(), {"--account", options_.slurm_account});
      const auto r = slurm::run_process(argv);
      if (r.exit_code != 0) throw std::runtime_error("sweep submission failed: " + r.err);
      job.slurm_job_id = r.out.substr(0, r.out.find('\n'));
    }
    job.state = "PENDING";
    return;
  }
  std::vector<std::string> argv{exe, "--log-level", "warn"};
  if (job.kind == "experiment") {
    argv.insert(argv.end(), {"run", job.spec_path, "--progress-seconds", "0"});
  } else {
    argv.insert(argv.end(), {"sweep", job.spec_path, "--out", job.dir + "/out", "--jobs",
                             std::to_string(job.jobs), "--no-progress"});
  }
  job.child.emplace(argv, job.dir + "/stdout.part", job.dir + "/stderr.log");
  job.state = "running";
}

void JobManager::tick() {
  int running = 0;
  for (auto& [id, job] : jobs_) {
    if (!job->child || job->state != "running") continue;
    if (const auto code = job->child->poll()) {
      job->exit_code = *code;
      job->state = *code == 0 ? "done" : "failed";
      std::error_code ec;
      fs::rename(job->dir + "/stdout.part", job->dir + "/stdout.txt", ec);
      job->child.reset();
      save(*job);
    } else {
      ++running;
    }
  }
  while (!queue_.empty() && running < options_.max_running) {
    Job* job = queue_.front();
    queue_.pop_front();
    try {
      start(*job);
      ++running;
    } catch (const std::exception&) {
      job->state = "failed";
      job->exit_code = -1;
    }
    save(*job);
  }
}

void JobManager::refresh_slurm(Job& job) {
  if (job.slurm_job_id.empty()) return;
  std::vector<slurm::JobRecord> records;
  try {
    records = slurm::query_job(job.slurm_job_id);
  } catch (const std::exception&) {
    return;  // slurmctld unreachable right now: keep the last known state
  }
  if (records.empty()) return;
  bool all_terminal = true, all_completed = true;
  std::string first_active;
  for (const auto& r : records) {
    if (!slurm::is_terminal_state(r.state)) {
      all_terminal = false;
      if (first_active.empty()) first_active = r.state;
    }
    if (r.state != "COMPLETED") all_completed = false;
  }
  job.state = !all_terminal ? first_active : all_completed ? "done" : records.front().state;
}

std::string JobManager::output_of(const Job& job) const {
  if (job.kind == "sweep") return job.dir + "/out/index.csv";
  if (job.slurm_job_id.empty()) return job.dir + "/stdout.txt";
  return job.dir + "/slurm/warpsim-" + job.id + "-" + job.slurm_job_id + ".out";
}

spec::JobStatus JobManager::describe(Job& job) {
  const std::string before = job.state;
  refresh_slurm(job);  // no-op for local jobs
  if (job.state != before) save(job);
  spec::JobStatus s;
  s.set_id(job.id);
  s.set_kind(job.kind);
  s.set_state(job.state);
  s.set_exit_code(job.exit_code);
  s.set_slurm_job_id(job.slurm_job_id);
  std::error_code ec;
  if (fs::exists(output_of(job), ec)) s.set_output(output_of(job));
  return s;
}

spec::ServiceReply JobManager::status(const std::string& id) {
  spec::ServiceReply reply;
  if (id.empty()) {
    for (auto& [key, job] : jobs_) *reply.add_jobs() = describe(*job);
  } else {
    if (!valid_id(id)) return error("status.id: '" + id.substr(0, 40) + "' is not a job id (j1, j2, ...)");
    const auto it = jobs_.find(id);
    if (it == jobs_.end()) return error("status.id: no job " + id);
    *reply.add_jobs() = describe(*it->second);
  }
  reply.set_ok(true);
  return reply;
}

spec::ServiceReply JobManager::cancel(const std::string& id) {
  if (!valid_id(id)) return error("cancel.id: '" + id.substr(0, 40) + "' is not a job id (j1, j2, ...)");
  const auto it = jobs_.find(id);
  if (it == jobs_.end()) return error("cancel.id: no job " + id);
  Job& job = *it->second;
  if (!job.slurm_job_id.empty()) {
    slurm::cancel_job(job.slurm_job_id);
    job.state = "CANCELLED";
  } else if (job.state == "queued") {
    queue_.remove(&job);
    job.state = "cancelled";
  } else if (job.state == "running") {
    job.exit_code = job.child->stop();
    job.child.reset();
    job.state = "cancelled";
  } else {
    return error("cancel.id: job " + id + " already ended (" + job.state + ")");
  }
  save(job);
  spec::ServiceReply reply;
  reply.set_ok(true);
  *reply.add_jobs() = describe(job);
  return reply;
}

spec::ServiceReply JobManager::list_results() {
  spec::ServiceReply reply;
  reply.set_ok(true);
  for (auto& [id, job] : jobs_) {
    const std::string out = output_of(*job);
    std::error_code ec;
    if (job->kind == "experiment") {
      if (job->state != "done" || !fs::exists(out, ec)) continue;
      const auto values = sweep::parse_summary(sweep::read_text_file(out));
      auto& row = *reply.add_results();
      row.set_job_id(job->id);
      if (const auto name = values.find("experiment"); name != values.end()) row.set_experiment(name->second);
      row.set_status("done");
      add_values(row, values);
    } else if (fs::exists(job->dir + "/out/manifest.tsv", ec)) {
      const sweep::SweepStore store(job->dir + "/out");
      for (const auto& r : store.rows(store.read_manifest())) {
        auto& row = *reply.add_results();
        row.set_job_id(job->id);
        row.set_experiment(r.entry.name);
        row.set_status(r.status);
        add_values(row, r.values);
      }
    }
  }
  return reply;
}

}  // namespace warpsim::serve
