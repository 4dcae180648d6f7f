// Pipeline schedules: 1F1B (PipeDream-Flush, as in Megatron-LM) and interleaved 1F1B with virtual stages
// (Narayanan et al., SC'21). Closed form: the k-th slot of a stage is computed arithmetically, so nothing
// per micro-batch is stored.
#pragma once

#include <cstdint>
#include <optional>

namespace warpsim::workload {

struct ScheduleSlot {
  bool forward = true;
  std::uint32_t microbatch = 0;
  std::uint32_t chunk = 0;  // model chunk (virtual stage index on this pipeline rank); 0 for plain 1F1B
  bool operator==(const ScheduleSlot&) const = default;
};

// A slot on a given stage (a producer of the data a slot consumes).
struct StageSlot {
  std::uint32_t stage = 0;
  ScheduleSlot slot;
};

class PipelineSchedule {
 public:
  // chunks > 1 selects interleaved 1F1B, which needs microbatches % stages == 0.
  PipelineSchedule(std::uint32_t stages, std::uint32_t microbatches, std::uint32_t chunks = 1);

  std::uint32_t stages() const { return p_; }
  std::uint32_t microbatches() const { return m_; }
  std::uint32_t chunks() const { return v_; }
  std::uint64_t slots_per_stage() const { return 2ull * m_ * v_; }
  // Number of forward slots a stage runs before its first backward.
  std::uint64_t warmup(std::uint32_t stage) const;

  ScheduleSlot slot(std::uint32_t stage, std::uint64_t k) const;
  // The slot on another (or the same) stage whose output `s` consumes, or nothing for the very first
  // forward chunk. The last stage's last-chunk backward consumes its own forward (same stage).
  std::optional<StageSlot> producer(std::uint32_t stage, const ScheduleSlot& s) const;
  // Global virtual-stage index of a chunk on a stage; layers are assigned to virtual stages in order.
  std::uint32_t virtual_stage(std::uint32_t stage, std::uint32_t chunk) const { return chunk * p_ + stage; }
  bool first_virtual(std::uint32_t stage, std::uint32_t chunk) const { return stage == 0 && chunk == 0; }
  bool last_virtual(std::uint32_t stage, std::uint32_t chunk) const {
    return stage == p_ - 1 && chunk == v_ - 1;
  }

 private:
  ScheduleSlot nth(bool forward, std::uint64_t k) const;
  std::uint32_t p_, m_, v_;
};

}  // namespace warpsim::workload
