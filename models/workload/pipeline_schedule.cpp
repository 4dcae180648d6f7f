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

PipelineSchedule PipelineSchedule::dual_pipe(std::uint32_t stages, std::uint32_t microbatches) {
  if (stages < 2 || stages % 2 != 0 || microbatches % 2 != 0 || microbatches < 2ull * stages) {
    throw std::invalid_argument(
        "pipeline schedule: DualPipe needs an even stage count > 1 and an even "
        "microbatch count >= 2 x stages");
  }
  PipelineSchedule s(stages, microbatches, 1);
  s.v_ = 2;
  s.dual_ = true;
  s.table_.resize(stages);
  const std::uint32_t half_ranks = stages / 2, half_chunks = microbatches / 2;
  for (std::uint32_t rank = 0; rank < stages; ++rank) {
    auto& t = s.table_[rank];
    t.reserve(3ull * microbatches);
    const std::uint32_t h = std::min(rank, stages - 1 - rank);  // the reference's half_rank
    const std::uint32_t second = rank >= half_ranks ? 1 : 0;    // phases swap on the second half
    const bool middle = h == half_ranks - 1;
    std::uint32_t f[2] = {0, 0}, b[2] = {0, 0};
    std::vector<ScheduleSlot> pending_w;  // WeightGradStore: FIFO of deferred W passes
    std::size_t pending_head = 0;
    const auto F = [&](std::uint32_t phase, bool paired = false) {
      const std::uint32_t c = phase ^ second;
      t.push_back({true, f[c]++, c, false, paired});
    };
    const auto B = [&](std::uint32_t phase, bool zb = false, bool paired = false) {
      const std::uint32_t c = phase ^ second;
      t.push_back({false, b[c], c, false, paired});
      const ScheduleSlot w{false, b[c]++, c, true, false};
      if (zb) {
        pending_w.push_back(w);
      } else {
        t.push_back(w);  // the full backward: W right after its B
      }
    };
    const auto W = [&] { t.push_back(pending_w.at(pending_head++)); };
    // The pair of _forward_backward_chunk(phase0, phase1).
    const auto FB = [&](std::uint32_t phase0, std::uint32_t phase1, bool pair = true) {
      F(phase0, pair);
      B(phase1, false, pair);
    };
    for (std::uint32_t i = 0; i < (half_ranks - h - 1) * 2; ++i) F(0);  // step 1: nF0
    for (std::uint32_t i = 0; i <= h; ++i) {                            // step 2: nF0F1
      F(0);
      F(1);
    }
    for (std::uint32_t i = 0; i + h + 1 < half_ranks; ++i) {  // step 3: nB1W1F1, zero bubble
      B(1, true);
      W();
      F(1);
    }
    for (std::uint32_t i = 0; i < half_chunks - stages + h + 1; ++i) {  // step 4: nF0B1F1B0
      // The middle ranks' first forward and backward are not overlapped (the reference's note).
      FB(0, 1, !(i == 0 && middle));
      FB(1, 0);
    }
    for (std::uint32_t i = 0; i + h + 1 < half_ranks; ++i) {  // step 5: nB1F1B0
      B(1);
      FB(1, 0);
    }
    bool zb = false;
    for (std::uint32_t i = 0; i <= h; ++i) {  // step 6: nB1B0, the second half with zero bubble
      if (i == (h + 1) / 2 && h % 2 == 1) zb = true;
      B(1, zb);
      if (i == (h + 1) / 2 && h % 2 == 0) zb = true;
      B(0, zb);
    }
    for (std::uint32_t i = 0; i + h + 1 < half_ranks; ++i) {  // step 7: nWB0
      W();
      B(0, true);
    }
    for (std::uint32_t i = 0; i <= h; ++i) W();  // step 8: nW
    if (pending_head != pending_w.size() || t.size() != 3ull * microbatches || f[0] != half_chunks ||
        f[1] != half_chunks) {
      throw std::logic_error("pipeline schedule: DualPipe slot table inconsistent");
    }
  }
  return s;
}

std::uint64_t PipelineSchedule::max_in_flight(std::uint32_t stage) const {
  if (table_.empty()) return std::min<std::uint64_t>(warmup(stage) + 1, std::uint64_t{m_} * v_);
  std::uint64_t n = 0, peak = 0;
  for (const ScheduleSlot& s : table_[stage]) {
    if (s.forward) peak = std::max(peak, ++n);
    if (!s.forward && !s.weight) --n;
  }
  return peak;
}

std::uint32_t PipelineSchedule::send_peer(std::uint32_t stage, const ScheduleSlot& s) const {
  if (dual_) {
    const bool up = s.forward == (s.chunk == 0);  // towards higher ranks
    return up ? stage + 1 : stage - 1;
  }
  if (s.forward) return stage + 1 < p_ ? stage + 1 : 0;
  return stage > 0 ? stage - 1 : p_ - 1;
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
  if (dual_) {
    // Chunk 0 flows to higher ranks forward, chunk 1 to lower ones; backwards the other way.
    const bool from_below = s.forward == (s.chunk == 0);
    const bool edge = from_below ? stage == 0 : stage == p_ - 1;
    if (edge) {
      if (s.forward) return std::nullopt;
      return StageSlot{stage, {true, s.microbatch, s.chunk}};
    }
    return StageSlot{from_below ? stage - 1 : stage + 1, {s.forward, s.microbatch, s.chunk}};
  }
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
