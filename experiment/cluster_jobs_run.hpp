// `warpsim run` of an experiment with several jobs on one cluster (ExperimentSpec.jobs,
// docs/shared-clusters.md): each job's own training program placed on the GPUs its policy gives
// (job_placement.hpp), all simulated together on one fabric (training::MultiJobProgram), and per job its
// step time, throughput and exposed communication, plus the fabric's shared link utilization, in the
// summary and in the HDF5 group /jobs/<name>.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "experiment/spec/experiment.pb.h"
#include "experiment/training_run.hpp"
#include "models/cluster/cluster_params.hpp"
#include "models/training/multi_job_program.hpp"
#include "models/workload/job.hpp"
#include "models/workload/step_estimate.hpp"

namespace warpsim::experiment {

struct PlacedClusterJob {
  std::string name, placement;
  std::shared_ptr<const workload::Job> job;
  workload::StepEstimate estimate;
  bool rail_aligned = true;  // NCCL's rail-aligned rings apply (node_aligned placement)
};

struct ClusterJobsSetup {
  cluster::ClusterParams params;
  std::uint32_t steps = 1;
  std::vector<PlacedClusterJob> jobs;  // in spec order; program->jobs()[j] is jobs[j]'s program and GPUs
  std::shared_ptr<const training::MultiJobProgram> program;
};

// Places and builds the jobs of a validated experiment. Throws std::invalid_argument naming the field.
ClusterJobsSetup build_cluster_jobs(const spec::ExperimentSpec& exp);

// Collective over `comm`, like run_training (which calls it for an experiment with `jobs`).
RunOutcome run_cluster_jobs(const spec::ExperimentSpec& exp, const RunRequest& request, MPI_Comm comm);

}  // namespace warpsim::experiment
