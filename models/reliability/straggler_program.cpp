// Straggler GPUs (see straggler_program.hpp).
#include "models/reliability/straggler_program.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "engine/random.hpp"

namespace warpsim::reliability {

namespace {
// RNG stream of the straggler draw (distinct from the engine's per-event streams).
constexpr std::uint32_t kStragglerStream = 0x5714661e;
}  // namespace

std::vector<std::uint32_t> pick_stragglers(std::uint64_t seed, std::uint32_t gpus, double fraction) {
  const auto count =
      static_cast<std::uint32_t>(std::llround(std::clamp(fraction, 0.0, 1.0) * static_cast<double>(gpus)));
  std::vector<std::pair<std::uint64_t, std::uint32_t>> draws(gpus);
  for (std::uint32_t g = 0; g < gpus; ++g) draws[g] = {Rng(seed, kStragglerStream, g).next_u64(), g};
  // The count smallest draws (ties broken by GPU index, so the choice is a total order).
  std::partial_sort(draws.begin(), draws.begin() + count, draws.end());
  std::vector<std::uint32_t> slow(count);
  for (std::uint32_t i = 0; i < count; ++i) slow[i] = draws[i].second;
  std::sort(slow.begin(), slow.end());
  return slow;
}

StragglerProgram::StragglerProgram(std::shared_ptr<const cluster::GpuProgram> inner, std::uint64_t seed,
                                   std::uint32_t gpus, const StragglerParams& params)
    : inner_(std::move(inner)),
      slowdown_(params.slowdown),
      slow_(pick_stragglers(seed, gpus, params.gpu_fraction)),
      is_slow_(gpus, false) {
  for (std::uint32_t g : slow_) is_slow_[g] = true;
}

std::optional<cluster::GpuOp> StragglerProgram::op(std::uint32_t gpu, std::uint64_t index) const {
  auto op = inner_->op(gpu, index);
  if (op && op->kind == cluster::OpKind::kCompute && gpu < is_slow_.size() && is_slow_[gpu]) {
    op->duration_ps = static_cast<SimTime>(std::llround(static_cast<double>(op->duration_ps) * slowdown_));
  }
  return op;
}

}  // namespace warpsim::reliability
