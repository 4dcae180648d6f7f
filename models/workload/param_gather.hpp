// Overlapped parameter all-gather (training.overlap_param_gather; Megatron-Core's --overlap-param-gather,
// NeMo's overlap_param_sync): which forward op of the first micro-batch needs each ZeRO-1/2 parameter
// all-gather bucket of the step end, so that the training program can run the all-gathers on the
// communication stream from the start of the step and hold each layer's first forward until its bucket
// arrived.
//
// Megatron-Core dispatches the buckets' all-gathers after the optimizer step and waits for a bucket in the
// forward pre-hook of the first module whose parameters it holds, so the gathers overlap the next step's
// first forward. Here the step-end all-gather buckets (Job::build_step_end: equal byte sizes of
// training.grad_bucket_bytes, dense then expert) are laid over the stage's parameters in the order the
// first micro-batch's forward uses them (per model chunk: embedding, layers bottom up, head), and a bucket
// is needed by the first forward op of the layer that holds its first byte (a layer's embedding and head
// parameters count with its first and last layer: their wait comes at that layer's first op, a little early).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "models/workload/job.hpp"

namespace warpsim::workload {

// A step-end ZeRO-1/2 parameter all-gather bucket (dense or expert).
bool is_param_gather(const LayerOp& op);

// For each op of job.step_end_ops(stage) that is_param_gather, in that order: the index within a step of
// the stage's workload op (the first forward op of a layer in the step's first micro-batch) before which
// the bucket's parameters must have arrived.
std::vector<std::uint64_t> param_needed_ops(const std::shared_ptr<const Job>& job, std::uint32_t stage);

}  // namespace warpsim::workload
