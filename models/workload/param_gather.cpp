// Which forward op needs each parameter all-gather bucket (see param_gather.hpp).
#include "models/workload/param_gather.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <stdexcept>
#include <utility>

#include "models/workload/gpu_program.hpp"

namespace warpsim::workload {

bool is_param_gather(const LayerOp& op) {
  return op.kind == OpKind::kCollective && op.phase == Phase::kOptimizer &&
         op.collective == CollectiveKind::kAllGather &&
         (op.group == GroupKind::kDataContext || op.group == GroupKind::kExpertDataContext);
}

namespace {
// A layer's first forward op of the step's first micro-batch, and the parameters it needs (this GPU's).
struct Consumer {
  std::uint64_t op = 0;
  double dense = 0, expert = 0;
};

// The stage's consumers in execution order (one per model chunk and layer).
std::vector<Consumer> consumers(const std::shared_ptr<const Job>& job_ptr, std::uint32_t stage) {
  const Job& job = *job_ptr;
  const GpuProgram prog(job_ptr, stage * job.pipeline_stride(), 1);
  const std::uint64_t slots_end = job.slot_offset(stage, job.schedule().slots_per_stage());
  const auto& L = job.layer_ops();
  std::vector<Consumer> out;
  std::map<std::pair<std::uint32_t, std::uint32_t>, bool> seen;  // (chunk, layer)
  for (std::uint64_t k = 0; k < slots_end; ++k) {
    const Op op = prog.op(k);
    if (op.kind != OpKind::kCompute || op.phase != Phase::kForward || op.microbatch != 0) continue;
    if (!seen.emplace(std::make_pair(op.chunk, op.layer), true).second) continue;
    out.push_back({k, job.dense_params_of_layer(op.layer),
                   job.leading_dense(op.layer) ? 0.0 : L.expert_layer_params_per_gpu});
  }
  if (out.empty()) throw std::logic_error("param_needed_ops: a stage without a first forward");
  // The embedding is used by the stage's first forward, the head by its last.
  if (job.holds_embedding(stage)) out.front().dense += L.embedding_params_per_gpu;
  if (job.holds_head(stage)) out.back().dense += L.head_params_per_gpu;
  return out;
}
}  // namespace

std::vector<std::uint64_t> param_needed_ops(const std::shared_ptr<const Job>& job_ptr, std::uint32_t stage) {
  const Job& job = *job_ptr;
  const std::vector<Consumer> use = consumers(job_ptr, stage);
  // Each kind's buckets in step-end order cover its parameters in forward order: bucket b starts at the
  // bytes of the buckets before it, and is needed by the consumer holding that first byte.
  double total_bytes[2] = {0, 0}, total_params[2] = {0, 0};
  for (const LayerOp& op : job.step_end_ops(stage)) {
    if (is_param_gather(op)) total_bytes[op.group == GroupKind::kExpertDataContext ? 1 : 0] += op.comm_bytes;
  }
  for (const Consumer& c : use) {
    total_params[0] += c.dense;
    total_params[1] += c.expert;
  }
  std::vector<std::uint64_t> out;
  double start[2] = {0, 0};
  for (const LayerOp& op : job.step_end_ops(stage)) {
    if (!is_param_gather(op)) continue;
    const int kind = op.group == GroupKind::kExpertDataContext ? 1 : 0;
    const double target = total_bytes[kind] > 0 ? start[kind] / total_bytes[kind] * total_params[kind] : 0;
    start[kind] += static_cast<double>(op.comm_bytes);
    // The first consumer whose parameters end beyond the bucket's first byte (the last one, for rounding).
    double cum = 0;
    std::uint64_t needed = use.back().op;
    for (const Consumer& c : use) {
      cum += kind == 0 ? c.dense : c.expert;
      if (cum > target * (1 + 1e-12)) {
        needed = c.op;
        break;
      }
    }
    out.push_back(needed);
  }
  return out;
}

}  // namespace warpsim::workload
