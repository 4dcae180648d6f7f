// Memory per GPU of a training job: weights, gradients and optimizer state of the GPU's shard, and the
// activations its pipeline stage holds at the peak of the schedule. An estimate from closed forms, not an
// allocator simulation: no CUDA context, NCCL buffers, workspace or fragmentation (docs/workload.md,
// "Memory").
//
// Parameter state (Rajbhandari et al. 2020, "ZeRO", arXiv 1910.02054, section 3.1): model-dtype weights and
// gradients plus K = 12 bytes of fp32 Adam state per parameter (master weight + two moments; 8 for SGD:
// master + momentum), ZeRO-1 sharding the optimizer state, ZeRO-2 also the gradients, ZeRO-3 also the
// weights over the data-parallel group.
//
// Activations per layer (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer
// Models", arXiv 2205.05198, section 4 and Table 2): sbh(34 + 5as/h) bytes with 16-bit activations and no
// parallelism; sbh(10 + 24/t + 5as/(ht)) with tensor parallelism; sbh/t (34 + 5as/h) with sequence
// parallelism; the 5as/h term (softmax output, dropout mask and output of the s x s attention scores) goes
// with selective recomputation (or a fused attention kernel); full recomputation keeps only each layer's
// input, 2sbh (2sbh/t with sequence parallelism). layer_activation_bytes() evaluates the tensors of their
// section 4.1 breakdown for the job's shape (GQA key/value width, a gated or non-4h MLP, MoE top-k, CP's
// local tokens, the storage dtype), so it reproduces Table 2 exactly for a GPT-shaped model.
//
// In flight: stage s of a 1F1B pipeline holds min(p - s, m) micro-batches' activations (its warm-up
// forwards plus one, PipelineSchedule::warmup); interleaved 1F1B holds warmup(s) + 1 model chunks, which is
// Korthikanti's L(1 + (p - 1)/(pv)) layers on the first stage (section 4.2.3). ZB-H1 and DualPipe count the
// chunks between forward and input-gradient backward in their slot tables (PipelineSchedule::max_in_flight:
// ZB-H1 keeps 1F1B's order of F and B, so the same counts; DualPipe PP + 1 chunks of one stage's layers on
// every rank, its README's figure). A W-pending micro-batch's retained GEMM inputs are not counted
// (docs/workload.md). The stage holding the output head (under DualPipe both end ranks) also holds one
// micro-batch's fp32 logits for the cross-entropy loss, 4sbv/t (section 4.3). DualPipe's ranks hold two
// stages' parameters, gradients and optimizer state (Job::layers_in_stage counts both model copies).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "models/workload/job_params.hpp"
#include "models/workload/transformer.hpp"

namespace warpsim::workload {

class Job;

struct StageMemory {
  double weight_bytes = 0;            // model-dtype weights (+ FP8 weight copies) of this GPU's shard
  double gradient_bytes = 0;          // gradients, in the reduction dtype
  double optimizer_bytes = 0;         // fp32 master weights and optimizer moments
  double activation_bytes = 0;        // activations held at the schedule's peak
  std::uint64_t inflight_chunks = 0;  // micro-batch model chunks whose activations are held at the peak
  double parameter_bytes() const { return weight_bytes + gradient_bytes + optimizer_bytes; }
  double total_bytes() const { return parameter_bytes() + activation_bytes; }
};

struct MemoryEstimate {
  std::vector<StageMemory> stages;  // one per pipeline stage (every GPU of a stage holds the same)
  std::uint32_t peak_stage = 0;     // the stage with the largest total
  double hbm_bytes = 0;             // the GPU's capacity (the peak stage's smallest, several GPU types)
  // Per stage, the smallest HBM among the stage's GPUs and that GPU type (node groups of several types;
  // otherwise every entry is the job's GPU).
  std::vector<double> stage_hbm_bytes;
  std::vector<std::string_view> stage_hbm_gpu;
  const StageMemory& peak() const { return stages[peak_stage]; }
};

// Activation bytes one transformer layer keeps for its backward, per micro-batch of `micro_batch`
// sequences, on one GPU; `dense_mlp`: an MoE model's leading dense layer (model.first_dense_layers).
double layer_activation_bytes(const ModelShape& s, const Degrees& d, std::uint64_t micro_batch,
                              RecomputeMode recompute, bool dense_mlp = false);

MemoryEstimate estimate_memory(const Job& job);

// "93.1 GiB (stage 0: parameters 40.2 GiB, activations 52.9 GiB) exceeds the H100-SXM's HBM of 80.0 GiB"
std::string describe_overflow(const MemoryEstimate& m, std::string_view gpu);
// The same for stage `stage` against its own GPUs' HBM (stage_hbm_bytes).
std::string describe_overflow(const MemoryEstimate& m, std::uint32_t stage, std::string_view gpu);

}  // namespace warpsim::workload
