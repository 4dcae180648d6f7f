// When each step-end gradient bucket is ready (see grad_buckets.hpp).
#include "models/workload/grad_buckets.hpp"

#include <algorithm>
#include <stdexcept>

namespace warpsim::workload {

bool is_grad_reduce(const LayerOp& op) {
  return op.kind == OpKind::kCollective && op.phase == Phase::kGradSync &&
         (op.group == GroupKind::kDataContext || op.group == GroupKind::kExpertDataContext);
}

namespace {
// A point of the stage's last-micro-batch backwards where gradients come into existence: after op `op` of
// the step, `dense` and `expert` more bytes.
struct Producer {
  std::uint64_t op = 0;
  double dense = 0, expert = 0;
};

// The stage's producers in execution order: per model chunk (in the order its last micro-batch's backward
// runs), the head (last virtual stage), each layer from the last to the first, the embedding (first one).
std::vector<Producer> producers(const Job& job, std::uint32_t stage) {
  const auto& sched = job.schedule();
  const auto& L = job.layer_ops();
  const auto& d = job.degrees();
  const double ge = job.grad_bytes_per_param();
  // ZeRO-3 reduce-scatters the layers' gradients per micro-batch: only the embedding/head remain at the end.
  const bool zero3 = d.zero == 3;
  const double dense_layer = zero3 ? 0 : L.dense_layer_params_per_gpu * ge;
  const double expert_layer = zero3 ? 0 : L.expert_layer_params_per_gpu * ge;
  const bool p2p = sched.stages() > 1;
  const std::uint64_t recv_ops = d.pp_scatter_gather ? 2 : 1;
  std::vector<Producer> out;
  for (std::uint64_t k = 0; k < sched.slots_per_stage(); ++k) {
    const ScheduleSlot s = sched.slot(stage, k);
    if (s.forward || s.microbatch + 1 != sched.microbatches_per_chunk()) continue;
    const std::uint32_t lc = job.layers_in_chunk(stage);
    if (s.weight) {
      // A split backward's W pass: the layers' weight gradients come into existence here.
      std::uint64_t pos = job.slot_offset(stage, k);
      for (std::uint32_t j = 0; j < lc; ++j) {
        const std::uint32_t layer = job.first_layer(stage, s.chunk) + lc - 1 - j;
        pos += job.layer_weight_grad(layer).size();
        if (job.leading_dense(layer)) {
          out.push_back({pos - 1, zero3 ? 0 : L.first_dense_layer_params_per_gpu * ge, 0});
        } else {
          out.push_back({pos - 1, dense_layer, expert_layer});
        }
      }
      continue;
    }
    const bool split = sched.split_backward();
    const bool first = sched.first_virtual(stage, s.chunk), last = sched.last_virtual(stage, s.chunk);
    // The op layout of a backward slot (GpuProgram::slot_op): receive (+ gather), head, layers, embedding.
    std::uint64_t pos = job.slot_offset(stage, k);
    if (p2p && !last && !s.paired) pos += recv_ops;
    if (last && !L.head_backward.empty()) {
      pos += L.head_backward.size();
      out.push_back({pos - 1, L.head_params_per_gpu * ge, 0});
    }
    for (std::uint32_t j = 0; j < lc; ++j) {
      const std::uint32_t layer = job.first_layer(stage, s.chunk) + lc - 1 - j;  // the backward's order
      pos += job.layer_backward(layer).size();
      if (split) continue;  // the layers' weight gradients come with the W pass
      if (job.leading_dense(layer)) {
        out.push_back({pos - 1, zero3 ? 0 : L.first_dense_layer_params_per_gpu * ge, 0});
      } else {
        out.push_back({pos - 1, dense_layer, expert_layer});
      }
    }
    if (first && !L.embedding_backward.empty()) {
      pos += L.embedding_backward.size();
      out.push_back({pos - 1, L.embedding_params_per_gpu * ge, 0});
    }
  }
  // A split backward's embedding/head gradients (B pass) precede the layers' (W pass): execution order.
  std::stable_sort(out.begin(), out.end(), [](const Producer& a, const Producer& b) { return a.op < b.op; });
  return out;
}
}  // namespace

std::vector<std::uint64_t> grad_ready_ops(const Job& job, std::uint32_t stage) {
  const std::vector<Producer> prod = producers(job, stage);
  if (prod.empty()) throw std::logic_error("grad_ready_ops: a stage without a last backward");
  std::vector<std::uint64_t> out;
  // Bytes of the buckets so far and of the producers up to `at`, per kind (dense, expert).
  double wanted[2] = {0, 0}, have[2] = {0, 0};
  std::size_t at[2] = {0, 0};
  have[0] = prod[0].dense;
  have[1] = prod[0].expert;
  for (const LayerOp& op : job.step_end_ops(stage)) {
    if (!is_grad_reduce(op)) continue;
    const int kind = op.group == GroupKind::kExpertDataContext ? 1 : 0;
    wanted[kind] += static_cast<double>(op.comm_bytes);
    // Bucket sizes were rounded to whole bytes: allow a byte per bucket.
    const double tolerance = 1.0 + 1e-9 * wanted[kind];
    while (have[kind] + tolerance < wanted[kind] && at[kind] + 1 < prod.size()) {
      ++at[kind];
      have[kind] += kind == 0 ? prod[at[kind]].dense : prod[at[kind]].expert;
    }
    out.push_back(prod[at[kind]].op);
  }
  return out;
}

}  // namespace warpsim::workload
