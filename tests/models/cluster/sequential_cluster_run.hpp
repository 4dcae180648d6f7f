// Shared by the cluster model's gtests: a 2-tier fat-tree with 400 Gb/s, 500 ns links, and one sequential
// run of a GPU program on it (engine on MPI_COMM_SELF) with what the tests check afterwards.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <memory>

#include "engine/kernel/engine.hpp"
#include "models/cluster/cluster_model.hpp"
#include "partition/block_map.hpp"

namespace warpsim::cluster {

inline ClusterParams flat(std::uint32_t nodes, std::uint32_t gpus_per_node, std::uint32_t radix,
                          double oversub = 1.0, Fidelity fidelity = Fidelity::kPacket) {
  ClusterParams p;
  p.nodes = nodes;
  p.gpus_per_node = gpus_per_node;
  p.tiers = 2;
  p.radix = radix;
  p.oversubscription = oversub;
  p.links[0] = {400, 500 * kPicosPerNano};
  p.links[1] = {400, 500 * kPicosPerNano};
  p.fidelity = fidelity;
  return p;
}

struct Ran {
  std::unique_ptr<ClusterModel> model;
  RunResult result;
  SimTime finish = 0;  // last GPU to finish
  bool all_done = true;
};

inline Ran run(const ClusterParams& p, std::shared_ptr<const GpuProgram> program) {
  Ran r;
  r.model = std::make_unique<ClusterModel>(p, std::move(program));
  EngineConfig config;
  config.sync = SyncMode::kSequential;
  config.end_time = 1000 * kPicosPerSecond;
  config.progress_seconds = 0;
  BlockLpMap map(r.model->lp_count(), 1);
  Engine engine(*r.model, map, config, MPI_COMM_SELF);
  r.result = engine.run();
  const GpuLp& gpus = r.model->gpus();
  for (std::uint32_t s = 0; s < gpus.size(); ++s) {
    r.finish = std::max(r.finish, gpus.state(s).finish_ps);
    r.all_done = r.all_done && gpus.state(s).done;
  }
  return r;
}

inline double seconds(SimTime ps) {
  return static_cast<double>(ps) / static_cast<double>(kPicosPerSecond);
}

}  // namespace warpsim::cluster
