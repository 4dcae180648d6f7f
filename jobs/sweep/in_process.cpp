// In-process batch of experiments on one engine (see in_process.hpp).
#include "jobs/sweep/in_process.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "engine/kernel/engine.hpp"
#include "experiment/training_setup.hpp"
#include "jobs/sweep/composite_model.hpp"
#include "models/cluster/cluster_model.hpp"
#include "partition/block_map.hpp"

namespace warpsim::sweep {

namespace {

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace

std::vector<std::map<std::string, std::string>> run_in_process(
    const std::vector<spec::ExperimentSpec>& experiments, std::uint64_t seed) {
  std::vector<std::unique_ptr<cluster::ClusterModel>> models;
  std::vector<Model*> pointers;
  std::vector<std::uint32_t> worlds, steps;
  SimTime end = 0;
  for (const auto& e : experiments) {
    const experiment::TrainingSetup t = experiment::build_training(e);
    models.push_back(std::make_unique<cluster::ClusterModel>(t.params, t.program));
    pointers.push_back(models.back().get());
    worlds.push_back(t.job->world_size());
    steps.push_back(t.steps);
    end = std::max(end,
                   static_cast<SimTime>(e.simulation().end_time_s() * static_cast<double>(kPicosPerSecond)));
  }
  CompositeModel composite(pointers, seed);
  const BlockLpMap map(composite.lp_count(), 1);
  EngineConfig config;
  config.sync = SyncMode::kSequential;
  config.end_time = end;
  config.seed = seed;
  config.progress_seconds = 0;
  Engine engine(composite, map, config, MPI_COMM_SELF);
  const RunResult r = engine.run();

  std::vector<std::map<std::string, std::string>> out;
  for (std::size_t k = 0; k < models.size(); ++k) {
    const auto& gpus = models[k]->gpus();
    std::uint64_t finish = 0, not_done = 0;
    for (std::uint32_t slot = 0; slot < gpus.size(); ++slot) {
      const auto& st = gpus.state(slot);
      if (models[k]->topology().gpu_of(st.id) >= worlds[k]) continue;  // st.id: the model's own LP id
      finish = std::max<std::uint64_t>(finish, st.finish_ps);
      not_done += st.done ? 0 : 1;
    }
    if (not_done != 0) throw std::runtime_error(experiments[k].name() + ": training did not complete");
    std::map<std::string, std::string> values;
    values["experiment"] = experiments[k].name();
    values["gpus"] = std::to_string(worlds[k]);
    values["steps"] = std::to_string(steps[k]);
    values["step seconds"] =
        fixed(static_cast<double>(finish) / static_cast<double>(kPicosPerSecond) / steps[k], 6);
    values["lps"] = std::to_string(models[k]->lp_count());
    values["wall seconds"] = fixed(r.wall_seconds / static_cast<double>(models.size()), 3);
    values["mode"] = "in-process x" + std::to_string(models.size());
    out.push_back(std::move(values));
  }
  return out;
}

}  // namespace warpsim::sweep
