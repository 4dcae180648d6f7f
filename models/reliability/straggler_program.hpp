// Slow GPUs (stragglers) as a GpuProgram decorator: the wrapped program's ops, with every compute op of a
// chosen GPU lengthened by a slowdown factor (thermal throttling, a bad HBM stack, a noisy neighbour).
// Which GPUs are slow is a pure function of (seed, GPU index) through the counter-based RNG: the GPUs
// whose draws are the `count` smallest, so the set is the same on every rank, in every sync mode, and op i
// of GPU g stays a pure function of (g, i) as the GPU LP's reverse handler requires. Needs no hook in
// the GPU LP or the training program.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "models/cluster/gpu_program.hpp"

namespace warpsim::reliability {

struct StragglerParams {
  double gpu_fraction = 0;  // share of the job's GPUs that are slow, in [0, 1]
  double slowdown = 1;      // compute-op duration factor of a slow GPU, >= 1
};

// The slow GPUs among [0, gpus): round(fraction x gpus) of them, sorted ascending.
std::vector<std::uint32_t> pick_stragglers(std::uint64_t seed, std::uint32_t gpus, double fraction);

class StragglerProgram final : public cluster::GpuProgram {
 public:
  StragglerProgram(std::shared_ptr<const cluster::GpuProgram> inner, std::uint64_t seed, std::uint32_t gpus,
                   const StragglerParams& params);
  std::optional<cluster::GpuOp> op(std::uint32_t gpu, std::uint64_t index) const override;
  const std::vector<std::uint32_t>& slow_gpus() const { return slow_; }

 private:
  std::shared_ptr<const cluster::GpuProgram> inner_;
  double slowdown_;
  std::vector<std::uint32_t> slow_;
  std::vector<bool> is_slow_;  // [gpu]
};

}  // namespace warpsim::reliability
