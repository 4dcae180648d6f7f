// Overlapped gradient reduction (training.overlap_grad_reduce; Megatron-Core's --overlap-grad-reduce): when
// the data-parallel gradient buckets of the step end have their gradients, so that the training program can
// issue each bucket's reduce on the communication stream as soon as it can start.
//
// Megatron-Core lays the gradients out in reverse parameter order (the order the backward produces them) and
// cuts the buffer into buckets of bucket_size; a bucket's reduce is launched once every gradient in it was
// produced by the backward of the LAST micro-batch (earlier micro-batches only accumulate). Here the buckets
// are those of Job::build_step_end (equal byte sizes of training.grad_bucket_bytes, dense then expert), and
// a bucket is ready after the backward of the layer holding its last byte: readiness at layer boundaries
// (a bucket that ends inside a layer waits for that whole layer), and one gradient order over the stage's
// model chunks (the order their last backward runs) where Megatron-Core buckets each chunk separately.
#pragma once

#include <cstdint>
#include <vector>

#include "models/workload/job.hpp"

namespace warpsim::workload {

// A step-end gradient reduce bucket: the collective over the data-parallel (x CP) or expert-data group.
bool is_grad_reduce(const LayerOp& op);

// For each op of job.step_end_ops(stage) that is_grad_reduce, in that order: the index within a step of
// the stage's workload op after which the bucket's gradients exist.
std::vector<std::uint64_t> grad_ready_ops(const Job& job, std::uint32_t stage);

}  // namespace warpsim::workload
