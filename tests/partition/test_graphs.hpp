// Shared fixtures of the partition tests: the LP graph of an experiment spec of the repository.
#pragma once

#include <memory>
#include <string>

#include "experiment/spec/cluster_spec.hpp"
#include "experiment/spec/experiment_spec.hpp"
#include "experiment/lp_graph.hpp"
#include "experiment/spec/job_spec.hpp"

namespace warpsim::partition::test {

struct Experiment {
  cluster::ClusterParams params;
  std::shared_ptr<const workload::Job> job;
};

inline Experiment load(const std::string& relative) {
  const spec::ExperimentSpec exp =
      spec::load_experiment_spec(std::string(WARPSIM_SOURCE_DIR) + "/" + relative);
  return {spec::to_cluster_params(exp.cluster()),
          std::make_shared<const workload::Job>(spec::to_job_params(exp.job()))};
}

inline PartitionGraph graph(const Experiment& e, training::Granularity g, bool edges = true) {
  return training::build_lp_graph(e.params, e.job, e.params.storage_targets, g, edges);
}

}  // namespace warpsim::partition::test
