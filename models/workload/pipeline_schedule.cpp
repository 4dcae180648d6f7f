// Closed-form 1F1B and interleaved 1F1B slot order (see pipeline_schedule.hpp). Mirrors Megatron-LM's
// forward_backward_pipelining_{without,with}_interleaving: `warmup` forwards, then alternating one forward
// and one backward, then the remaining backwards. ZB-H1 is the same order of F and B with the W passes
// placed as Qi et al. describe (built once into a table).
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

PipelineSchedule PipelineSchedule::zero_bubble_h1(std::uint32_t stages, std::uint32_t microbatches) {
  PipelineSchedule s(stages, microbatches, 1);
  if (stages < 2) throw std::invalid_argument("pipeline schedule: ZB-H1 needs more than one stage");
  s.table_.resize(stages);
  for (std::uint32_t st = 0; st < stages; ++st) {
    auto& t = s.table_[st];
    t.reserve(3ull * microbatches);
    std::uint32_t b = 0, w = 0;
    // A B pass, then the W pass it releases: stage st keeps st weight-gradient passes pending (the last
    // stage p-1, the first none), so the B passes, which no longer wait for W, travel up the pipeline
    // without gaps and the pending W passes fill each stage's cool-down; F-to-W in-flight micro-batches
    // stay at most p on every stage (1F1B's stage-0 peak).
    const auto backward = [&] {
      t.push_back({false, b++, 0, false});
      if (b - w > st) t.push_back({false, w++, 0, true});
    };
    // 1F1B's order of forwards and (input-gradient) backwards (the 1F1B schedule with chunks = 1).
    for (std::uint64_t k = 0; k < 2ull * microbatches; ++k) {
      const ScheduleSlot f = s.slot_1f1b(st, k);
      if (f.forward) {
        t.push_back(f);
      } else {
        backward();
      }
    }
    while (w < microbatches) t.push_back({false, w++, 0, true});
  }
  return s;
}

ScheduleSlot PipelineSchedule::slot(std::uint32_t stage, std::uint64_t k) const {
  if (!table_.empty()) return table_[stage][k];
  return slot_1f1b(stage, k);
}

ScheduleSlot PipelineSchedule::slot_1f1b(std::uint32_t stage, std::uint64_t k) const {
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
  if (s.weight) return StageSlot{stage, {false, s.microbatch, s.chunk, false}};
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
