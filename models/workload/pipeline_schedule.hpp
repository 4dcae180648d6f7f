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
  // DualPipe's forward-and-backward pairs: a forward with `paired` is followed by a backward (of the other
  // chunk) with `paired`, and the pair starts when both inputs are there: the backward's receive is done
  // before the forward (dualpipe.py's _forward_backward_chunk receives both, then computes).
  bool paired = false;
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
  // DualPipe (DeepSeek-V3 technical report, arXiv 2412.19437, sec. 3.2.1; deepseek-ai/DualPipe,
  // dualpipe.py): stages = PP ranks (even), two chunks per rank: chunk 0 is stage `rank` of the model copy
  // whose micro-batches enter at rank 0, chunk 1 stage `PP-1-rank` of the copy fed from rank PP-1. Half of
  // the micro-batches go each way (slot.microbatch counts within its chunk's direction). The slot order is
  // the reference's eight steps; B/W split where the reference defers W (WeightGradStore), the W right
  // after its B where it does the full backward. Needs microbatches even and >= 2 x stages.
  static PipelineSchedule dual_pipe(std::uint32_t stages, std::uint32_t microbatches);

  std::uint32_t stages() const { return p_; }
  std::uint32_t microbatches() const { return m_; }
  std::uint32_t chunks() const { return v_; }
  // Whether the backward is split into B and W slots (ZB-H1).
  bool split_backward() const { return !table_.empty(); }
  bool dual() const { return dual_; }
  // Micro-batches each chunk runs: all of them, or under DualPipe the half that goes its direction.
  std::uint32_t microbatches_per_chunk() const { return dual_ ? m_ / 2 : m_; }
  // A slot's micro-batch numbered over the step (DualPipe: direction 1's come after direction 0's).
  std::uint32_t step_microbatch(const ScheduleSlot& s) const {
    return dual_ ? s.chunk * (m_ / 2) + s.microbatch : s.microbatch;
  }
  std::uint64_t slots_per_stage() const { return table_.empty() ? 2ull * m_ * v_ : table_[0].size(); }
  // The most micro-batch chunks whose forward has run and whose (input-gradient) backward has not, on a
  // stage: what its activation memory holds at peak (memory_estimate.hpp).
  std::uint64_t max_in_flight(std::uint32_t stage) const;
  // Number of forward slots a stage runs before its first backward.
  std::uint64_t warmup(std::uint32_t stage) const;

  ScheduleSlot slot(std::uint32_t stage, std::uint64_t k) const;
  // The slot on another (or the same) stage whose output `s` consumes, or nothing for the very first
  // forward chunk. The last stage's last-chunk backward consumes its own forward (same stage).
  std::optional<StageSlot> producer(std::uint32_t stage, const ScheduleSlot& s) const;
  // Global virtual-stage index of a chunk on a stage; layers are assigned to virtual stages in order.
  // DualPipe: the stage of the chunk's model copy (chunk 1 runs the other way).
  std::uint32_t virtual_stage(std::uint32_t stage, std::uint32_t chunk) const {
    if (dual_) return chunk == 0 ? stage : p_ - 1 - stage;
    return chunk * p_ + stage;
  }
  bool first_virtual(std::uint32_t stage, std::uint32_t chunk) const {
    return dual_ ? virtual_stage(stage, chunk) == 0 : stage == 0 && chunk == 0;
  }
  bool last_virtual(std::uint32_t stage, std::uint32_t chunk) const {
    return dual_ ? virtual_stage(stage, chunk) == p_ - 1 : stage == p_ - 1 && chunk == v_ - 1;
  }
  // The stage a slot's output goes to (its send's peer): the next virtual stage forward, the previous one
  // backward. Not meaningful for the very last forward / first backward (which send nothing).
  std::uint32_t send_peer(std::uint32_t stage, const ScheduleSlot& s) const;

 private:
  ScheduleSlot nth(bool forward, std::uint64_t k) const;
  ScheduleSlot slot_1f1b(std::uint32_t stage, std::uint64_t k) const;
  std::uint32_t p_, m_, v_;
  bool dual_ = false;
  std::vector<std::vector<ScheduleSlot>> table_;  // [stage][k] for the table-driven schedules (ZB-H1)
};

}  // namespace warpsim::workload
