// What `warpsim serve` does with a request once it is framed, parsed and authenticated: validates the
// submitted spec (self-contained, valid, within limits), runs it as a child `warpsim run`/`warpsim sweep`
// (at most max_running at once, the rest queued) or forwards it to Slurm, and answers status, cancel and
// list-results from its job table. Single-threaded: the server calls it from its one io_context thread.
//
// The table survives restarts: each job's folder STATE/jobs/<id>/ holds its spec and a `job.state` record
// (kind, state, exit code, Slurm id; rewritten atomically on every change), and a new JobManager on the
// same state folder loads them all. Ids continue after the highest one ever given out (STATE/next-id and
// the folder names), and a job folder that already exists is never reused, so earlier outputs are never
// overwritten. A local job that was queued or running when the service stopped is `interrupted`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "experiment/spec/service.pb.h"
#include "jobs/sweep/child_process.hpp"

namespace warpsim::serve {

struct JobManagerOptions {
  std::string state_dir;        // jobs/<id>/ (spec, outputs) live here
  std::string warpsim_binary;   // the binary children run
  int max_running = 2;          // local children at once
  std::size_t max_jobs = 1000;  // jobs kept in the table (finished ones count); more are refused
  bool slurm = false;           // forward to Slurm instead of running locally
  std::string slurm_partition, slurm_time, slurm_account;
};

class JobManager {
 public:
  explicit JobManager(JobManagerOptions options);
  JobManager(const JobManager&) = delete;
  JobManager& operator=(const JobManager&) = delete;
  ~JobManager();  // stops running children

  // Handles one authenticated request; never throws for bad input (the reply says why).
  spec::ServiceReply handle(const spec::ServiceRequest& request);
  // Reaps finished children and starts queued jobs.
  void tick();

 private:
  // Job ids in numeric order (j2 before j10).
  struct IdLess {
    bool operator()(const std::string& a, const std::string& b) const {
      return a.size() != b.size() ? a.size() < b.size() : a < b;
    }
  };

  struct Job {
    std::string id;
    std::string kind;  // experiment | sweep
    std::string dir;
    std::string spec_path;
    std::uint32_t jobs = 1;
    std::string state = "queued";
    int exit_code = 0;
    std::string slurm_job_id;
    std::optional<sweep::ChildProcess> child;
  };

  spec::ServiceReply submit(const spec::SubmitRequest& request);
  spec::ServiceReply status(const std::string& id);
  spec::ServiceReply cancel(const std::string& id);
  spec::ServiceReply list_results();
  spec::JobStatus describe(Job& job);
  void start(Job& job);
  void refresh_slurm(Job& job);
  std::string output_of(const Job& job) const;
  void save(const Job& job);       // writes the job's record (job.state); never throws
  void load_history();             // reads the records of an existing state folder
  std::string allocate_job_dir();  // the next unused id; creates its folder

  JobManagerOptions options_;
  std::map<std::string, std::unique_ptr<Job>, IdLess> jobs_;
  std::list<Job*> queue_;
  std::uint64_t next_id_ = 1;
};

}  // namespace warpsim::serve
