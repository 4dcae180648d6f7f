// Several jobs' training programs on one cluster (see multi_job_program.hpp).
#include "models/training/multi_job_program.hpp"

#include <stdexcept>
#include <string>
#include <utility>

namespace warpsim::training {

MultiJobProgram::MultiJobProgram(std::vector<PlacedJob> jobs, std::uint32_t cluster_gpus)
    : jobs_(std::move(jobs)), owner_(cluster_gpus) {
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    const PlacedJob& job = jobs_[j];
    comm_stream_ = comm_stream_ || job.program->has_comm_stream();
    for (std::uint32_t r = 0; r < job.gpus.size(); ++r) {
      const std::uint32_t g = job.gpus[r];
      if (g >= cluster_gpus)
        throw std::invalid_argument("multi-job program: GPU " + std::to_string(g) + " beyond the cluster");
      if (owner_[g].job >= 0)
        throw std::invalid_argument("multi-job program: GPU " + std::to_string(g) + " placed twice");
      owner_[g] = {static_cast<int>(j), r};
    }
  }
}

cluster::GpuOp MultiJobProgram::to_cluster(const PlacedJob& j, cluster::GpuOp op) const {
  // Storage ops name a storage target in `peer`, shared by all jobs: unchanged.
  if (op.kind == cluster::OpKind::kSend || op.kind == cluster::OpKind::kRecv) op.peer = j.gpus.at(op.peer);
  return op;
}

std::optional<cluster::GpuOp> MultiJobProgram::op(std::uint32_t gpu, std::uint64_t index) const {
  const int job = job_of(gpu);
  if (job < 0) return std::nullopt;
  const PlacedJob& j = jobs_[static_cast<std::size_t>(job)];
  const std::uint64_t p = prefix(j);
  if (index < p) return index == 0 ? cluster::GpuOp::delay(j.start_ps) : cluster::GpuOp::wait();
  const auto op = j.program->op(owner_[gpu].rank, index - p);
  if (!op) return std::nullopt;
  return to_cluster(j, *op);
}

std::optional<cluster::GpuOp> MultiJobProgram::comm_op(std::uint32_t gpu, std::uint64_t index) const {
  const int job = job_of(gpu);
  if (job < 0) return std::nullopt;
  const PlacedJob& j = jobs_[static_cast<std::size_t>(job)];
  auto op = j.program->comm_op(owner_[gpu].rank, index);
  if (!op) return std::nullopt;
  // A WaitStream names an op of stream 0, which the start prefix shifted.
  if (op->kind == cluster::OpKind::kWaitStream) op->bytes += prefix(j);
  return to_cluster(j, *op);
}

SimTime MultiJobProgram::contended_ps(std::uint32_t gpu, SimTime duration) const {
  const int job = job_of(gpu);
  if (job < 0) return duration;
  return jobs_[static_cast<std::size_t>(job)].program->contended_ps(owner_[gpu].rank, duration);
}

bool MultiJobProgram::comm_contends(std::uint32_t gpu, std::uint64_t comm_pc) const {
  const int job = job_of(gpu);
  if (job < 0) return false;
  return jobs_[static_cast<std::size_t>(job)].program->comm_contends(owner_[gpu].rank, comm_pc);
}

std::uint64_t MultiJobProgram::size(std::uint32_t gpu) const {
  const int job = job_of(gpu);
  if (job < 0) return 0;
  const PlacedJob& j = jobs_[static_cast<std::size_t>(job)];
  return prefix(j) + j.program->size(owner_[gpu].rank);
}

}  // namespace warpsim::training
