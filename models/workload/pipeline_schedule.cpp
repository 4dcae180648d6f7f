// Closed-form 1F1B and interleaved 1F1B slot order (see pipeline_schedule.hpp). Mirrors Megatron-LM's
// forward_backward_pipelining_{without,with}_interleaving: `warmup` forwards, then alternating one forward
// and one backward, then the remaining backwards.
#include "models/workload/pipeline_schedule.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace warpsim::workload {

PipelineSchedule::PipelineSchedule(std::uint32_t stages, std::uint32_t microbatches, std::uint32_t chunks)
    : p_(stages), m_(microbatches), v_(chunks) {
  if (p_ == 0 || m_ == 0 || v_ == 0)
    throw std::invalid_argument("pipeline schedule: zero stages/microbatches/chunks");
  if (v_ > 1 && m_ % p_ != 0) {
    throw std::invalid_argument("pipeline schedule: interleaving needs microbatches (" + std::to_string(m_) +
                                ") to be a multiple of stages (" + std::to_string(p_) + ")");
  }
}

std::uint64_t PipelineSchedule::warmup(std::uint32_t stage) const {
  const std::uint64_t total = std::uint64_t{m_} * v_;
  const std::uint64_t w = v_ == 1 ? p_ - stage - 1 : 2ull * (p_ - stage - 1) + std::uint64_t{v_ - 1} * p_;
  return std::min(w, total);
}

ScheduleSlot PipelineSchedule::nth(bool forward, std::uint64_t k) const {
  // Interleaved order: groups of p micro-batches go through chunk 0, then chunk 1, ... (backward: reversed).
  const std::uint64_t group = std::uint64_t{p_} * v_;
  ScheduleSlot s;
  s.forward = forward;
  if (v_ == 1) {
    s.microbatch = static_cast<std::uint32_t>(k);
    return s;
  }
  const auto in_group = static_cast<std::uint32_t>(k % group);
  s.chunk = in_group / p_;
  if (!forward) s.chunk = v_ - 1 - s.chunk;
  s.microbatch = static_cast<std::uint32_t>((k / group) * p_ + in_group % p_);
  return s;
}

ScheduleSlot PipelineSchedule::slot(std::uint32_t stage, std::uint64_t k) const {
  const std::uint64_t total = std::uint64_t{m_} * v_;
  const std::uint64_t w = warmup(stage);
  if (k < w) return nth(true, k);
  const std::uint64_t steady = 2 * (total - w);
  if (k < w + steady) {
    const std::uint64_t j = k - w;
    return j % 2 == 0 ? nth(true, w + j / 2) : nth(false, j / 2);
  }
  return nth(false, (total - w) + (k - w - steady));
}

std::optional<StageSlot> PipelineSchedule::producer(std::uint32_t stage, const ScheduleSlot& s) const {
  if (s.forward) {
    if (stage > 0) return StageSlot{stage - 1, s};
    if (s.chunk == 0) return std::nullopt;
    return StageSlot{p_ - 1, {true, s.microbatch, s.chunk - 1}};
  }
  if (stage < p_ - 1) return StageSlot{stage + 1, s};
  if (s.chunk < v_ - 1) return StageSlot{0, {false, s.microbatch, s.chunk + 1}};
  return StageSlot{stage, {true, s.microbatch, s.chunk}};
}

}  // namespace warpsim::workload
