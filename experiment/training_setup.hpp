// A training experiment built from its (validated) spec: cluster parameters, the job, the training program
// of its steps and the compute-only estimate. build_job is the one place a workload::Job is constructed
// from an experiment (warpsim run, partition, cost and in-process sweeps all come through here), so a change
// of the Job's constructor lands here alone.
#pragma once

#include <cstdint>
#include <memory>

#include "experiment/spec/experiment.pb.h"
#include "models/cluster/cluster_params.hpp"
#include "models/training/training_program.hpp"
#include "models/workload/job.hpp"
#include "models/workload/step_estimate.hpp"

namespace warpsim::experiment {

// The experiment's job; a bad job is a std::invalid_argument prefixed "experiment spec: job: ".
std::shared_ptr<const workload::Job> build_job(const spec::ExperimentSpec& exp);

struct TrainingSetup {
  cluster::ClusterParams params;
  std::shared_ptr<const workload::Job> job;
  std::uint32_t steps = 1;  // simulation.steps (at least 1)
  std::shared_ptr<const training::TrainingProgram> program;
  workload::StepEstimate estimate;

  // The same steps without the communication classes in `removed` (training::bit(...) mask): the what-if
  // programs of --attribute and the checkpoint-stall measurement.
  std::shared_ptr<const training::TrainingProgram> program_without(std::uint32_t removed) const;
};

TrainingSetup build_training(const spec::ExperimentSpec& exp);

}  // namespace warpsim::experiment
