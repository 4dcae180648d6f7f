// Several training jobs sharing one cluster (docs/shared-clusters.md): one cluster::GpuProgram made of each
// job's TrainingProgram, each job on its own GPUs. Rank r of job j runs on cluster GPU gpus[r]: the job's
// program is asked for rank r's ops and every Send/Recv peer (a rank of the job) is rewritten to the peer's
// cluster GPU, so the traffic crosses the fabric between the GPUs the placement gave. A job that starts
// later begins its compute stream with [Delay(start), Wait]; the communication stream's WaitStream indices
// into stream 0 shift by those two ops (stream 1 always begins with a WaitStream, so it starts no earlier).
// GPUs of no job are idle. The jobs' GPU sets must be disjoint (message tags stay per job that way).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "engine/sim_time.hpp"
#include "models/cluster/gpu_program.hpp"
#include "models/training/training_program.hpp"

namespace warpsim::training {

struct PlacedJob {
  std::shared_ptr<const TrainingProgram> program;  // built for ranks 0 .. gpus.size()-1
  std::vector<std::uint32_t> gpus;                 // rank -> cluster GPU, distinct
  SimTime start_ps = 0;
};

class MultiJobProgram final : public cluster::GpuProgram {
 public:
  // Throws std::invalid_argument when two jobs share a GPU or a GPU is not below cluster_gpus.
  MultiJobProgram(std::vector<PlacedJob> jobs, std::uint32_t cluster_gpus);

  std::optional<cluster::GpuOp> op(std::uint32_t gpu, std::uint64_t index) const override;
  bool has_comm_stream() const override { return comm_stream_; }
  std::optional<cluster::GpuOp> comm_op(std::uint32_t gpu, std::uint64_t index) const override;
  SimTime contended_ps(std::uint32_t gpu, SimTime duration) const override;
  bool comm_contends(std::uint32_t gpu, std::uint64_t comm_pc) const override;

  const std::vector<PlacedJob>& jobs() const { return jobs_; }
  // The job on cluster GPU `gpu`, or -1 for an idle GPU.
  int job_of(std::uint32_t gpu) const { return gpu < owner_.size() ? owner_[gpu].job : -1; }
  // Compute-stream ops of cluster GPU `gpu` (the start prefix included; 0 for an idle GPU).
  std::uint64_t size(std::uint32_t gpu) const;

 private:
  struct Owner {
    int job = -1;
    std::uint32_t rank = 0;
  };
  std::uint64_t prefix(const PlacedJob& j) const { return j.start_ps > 0 ? 2 : 0; }
  cluster::GpuOp to_cluster(const PlacedJob& j, cluster::GpuOp op) const;

  std::vector<PlacedJob> jobs_;
  std::vector<Owner> owner_;  // per cluster GPU
  bool comm_stream_ = false;
};

}  // namespace warpsim::training
