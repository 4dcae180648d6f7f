// Pipeline schedules: 1F1B (PipeDream-Flush, as in Megatron-LM), interleaved 1F1B with virtual stages
// (Narayanan et al., SC'21) and ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, arXiv
// 2401.10241), whose backward is split into an input-gradient pass (B) and a weight-gradient pass (W). 1F1B
// and interleaved are closed forms: the k-th slot of a stage is computed arithmetically, so nothing per
// micro-batch is stored; ZB-H1 keeps its 3m slots per stage in a table built once.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace warpsim::workload {

struct ScheduleSlot {
  bool forward = true;
  std::uint32_t microbatch = 0;
  std::uint32_t chunk = 0;  // model chunk (virtual stage index on this pipeline rank); 0 for plain 1F1B
  // A weight-gradient (W) pass of a split backward (forward is then false): its B pass, the slot
  // {false, microbatch, chunk, false} on the same stage, computed the input gradients.
  bool weight = false;
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
  // ZB-H1: 1F1B's order of forwards and input-gradient backwards; stage s defers its W passes by s
  // backwards (W of micro-batch j runs right after the B of micro-batch j + s), and the deferred ones run
  // at the end, in the cool-down bubble. Every stage then holds at most p micro-batches between F and W,
  // which is 1F1B's peak (stage 0's), and the bubble is (p-1)(T_F + T_B - T_W) (arXiv 2401.10241, sec. 2.1).
  static PipelineSchedule zero_bubble_h1(std::uint32_t stages, std::uint32_t microbatches);

  std::uint32_t stages() const { return p_; }
  std::uint32_t microbatches() const { return m_; }
  std::uint32_t chunks() const { return v_; }
  // Whether the backward is split into B and W slots (ZB-H1).
  bool split_backward() const { return !table_.empty(); }
  std::uint64_t slots_per_stage() const { return (split_backward() ? 3ull : 2ull) * m_ * v_; }
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
  ScheduleSlot slot_1f1b(std::uint32_t stage, std::uint64_t k) const;
  std::uint32_t p_, m_, v_;
  std::vector<std::vector<ScheduleSlot>> table_;  // [stage][k] for the table-driven schedules (ZB-H1)
};

}  // namespace warpsim::workload
