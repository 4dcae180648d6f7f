// A validated training job: its parameters plus everything derived from them once (shape, degrees, GPU
// profile, compute model, per-layer op templates, pipeline schedule, per-stage op offsets) and the arithmetic
// GPU rank layout. Shared read-only by every GpuProgram of the job (one per simulated GPU).
//
// Rank layout (Megatron-LM order): tensor index fastest, then context, then data, then pipeline:
//   rank = tp + TP * (cp + CP * (dp + DP * pp)).
// Expert parallelism is carved out of the data dimension: ep index = dp % EP.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "models/workload/compute_model.hpp"
#include "models/workload/job_params.hpp"
#include "models/workload/moe_routing.hpp"
#include "models/workload/ops.hpp"
#include "models/workload/pipeline_schedule.hpp"
#include "models/workload/stage_layers.hpp"
#include "models/workload/transformer.hpp"

namespace warpsim::workload {

struct RankCoords {
  std::uint32_t tp = 0, cp = 0, dp = 0, pp = 0;
};

class Job {
 public:
  // Expects structurally valid params (spec::to_job_params validates a spec and names the field); checks
  // what the workload model owns itself: the GPU type, whether it supports the dtype, the compute-model
  // overrides and the 32-bit rank range (std::invalid_argument naming the spec field on error).
  explicit Job(JobParams params, EfficiencyParams efficiency = {},
               std::shared_ptr<const MeasuredTable> measured = nullptr);

  const JobParams& params() const { return params_; }
  const ModelShape& shape() const { return shape_; }
  const Degrees& degrees() const { return deg_; }
  // The job's reference GPU profile (gpu_type) and its compute model: every rank's unless the job spans
  // several GPU types (params().rank_gpu_types); MFU/HFU use its peak.
  const GpuProfile& gpu() const { return *gpu_; }
  const ComputeModel& compute() const { return compute_; }
  // The GPU profile and compute model of one rank (the reference ones on a single-type cluster).
  bool mixed_gpus() const { return !rank_models_.empty(); }
  const ComputeModel& compute(std::uint32_t rank) const {
    return rank_models_.empty() ? compute_ : computes_[model_index(rank)];
  }
  const GpuProfile& gpu(std::uint32_t rank) const { return compute(rank).gpu(); }
  // The distinct compute models of a pipeline stage's ranks (one on a single-type cluster).
  std::vector<const ComputeModel*> stage_computes(std::uint32_t stage) const;
  const LayerOps& layer_ops() const { return ops_; }
  const PipelineSchedule& schedule() const { return schedule_; }

  std::uint32_t world_size() const { return world_; }
  std::uint32_t microbatches() const { return schedule_.microbatches(); }
  // Transformer layers per pipeline stage and per model chunk (even or uneven split, stage_layers.hpp).
  const StageLayers& stage_layers() const { return stage_layers_; }
  // DualPipe: a rank holds two whole stages, stage `rank` of one model copy and stage PP-1-rank of the
  // other (the parameter memory doubles), each chunk one stage's layers.
  std::uint32_t layers_in_stage(std::uint32_t stage) const {
    return deg_.dual_pipe ? 2 * stage_layers_.stage(stage) : stage_layers_.stage(stage);
  }
  std::uint32_t layers_in_chunk(std::uint32_t stage) const { return stage_layers_.chunk(stage); }
  std::uint32_t first_layer(std::uint32_t stage, std::uint32_t chunk) const {
    if (deg_.dual_pipe) return stage_layers_.first_layer(schedule_.virtual_stage(stage, chunk), 0);
    return stage_layers_.first_layer(stage, chunk);
  }
  // Whether a stage's GPUs hold the embedding / the output head (dense_grad_params, memory).
  bool holds_embedding(std::uint32_t stage) const;
  bool holds_head(std::uint32_t stage) const;
  std::uint64_t micro_batch_sequences() const { return params_.training.micro_batch_sequences; }
  // An MoE model's leading dense layers (model.first_dense_layers): their op templates and how many of a
  // chunk's / stage's layers they are.
  bool leading_dense(std::uint32_t layer) const { return shape_.moe() && layer < shape_.dense_layers; }
  const std::vector<LayerOp>& layer_forward(std::uint32_t layer) const {
    return leading_dense(layer) ? ops_.dense_forward : ops_.forward;
  }
  const std::vector<LayerOp>& layer_backward(std::uint32_t layer) const {
    return leading_dense(layer) ? ops_.dense_backward : ops_.backward;
  }
  // Degrees::split_backward: the layer's weight-gradient (W pass) ops; empty otherwise.
  const std::vector<LayerOp>& layer_weight_grad(std::uint32_t layer) const {
    return leading_dense(layer) ? ops_.dense_weight_grad : ops_.weight_grad;
  }
  std::uint32_t leading_dense_in_chunk(std::uint32_t stage, std::uint32_t chunk) const;
  std::uint32_t leading_dense_in_stage(std::uint32_t stage) const;
  // Non-expert parameters of one layer on this GPU (a leading dense layer's or an MoE/dense layer's).
  double dense_params_of_layer(std::uint32_t layer) const {
    return leading_dense(layer) ? ops_.first_dense_layer_params_per_gpu : ops_.dense_layer_params_per_gpu;
  }
  // Skewed token routing (moe_routing.hpp); balanced() when model.moe_routing_skew is 0.
  const MoeRouting& routing() const { return routing_; }

  RankCoords coords(std::uint32_t rank) const;
  std::uint32_t rank_of(const RankCoords& c) const;
  std::uint32_t stage_of(std::uint32_t rank) const { return coords(rank).pp; }
  std::uint32_t pipeline_stride() const { return deg_.tp * deg_.cp * deg_.dp; }
  GroupDesc group(std::uint32_t rank, GroupKind kind) const;

  // Ops in a schedule slot of `stage` (recv + embedding/head + layers + send).
  std::uint64_t slot_op_count(std::uint32_t stage, const ScheduleSlot& s) const;
  // Index of the first op of slot k of `stage` within the step; k == slots_per_stage gives the total.
  std::uint64_t slot_offset(std::uint32_t stage, std::uint64_t k) const { return offsets_[stage][k]; }

  // Gradient bytes per GPU of a stage and their split (dense over DP x CP, expert over expert-data).
  double dense_grad_params(std::uint32_t stage) const;
  double expert_grad_params(std::uint32_t stage) const;
  double layer_dense_params(std::uint32_t stage) const;  // dense_grad_params without embedding and head
  double grad_bytes_per_param() const;
  // Step-end ops of a stage (gradient sync, optimizer, ZeRO all-gathers), group filled in per rank.
  const std::vector<LayerOp>& step_end_ops(std::uint32_t stage) const { return step_end_[stage]; }
  // Whole-job checkpoint size (training.checkpoint_bytes, or weights + optimizer state).
  double checkpoint_bytes() const;

 private:
  JobParams params_;
  ModelShape shape_;
  Degrees deg_;
  const GpuProfile* gpu_;
  ComputeModel compute_;
  LayerOps ops_;
  PipelineSchedule schedule_;
  std::uint32_t world_ = 1;
  StageLayers stage_layers_;
  MoeRouting routing_;
  std::vector<ComputeModel> computes_;  // one per distinct GPU type of rank_gpu_types
  // (first rank, index into computes_), sorted by first rank; empty = every rank on compute_.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> rank_models_;
  std::uint32_t model_index(std::uint32_t rank) const;
  void check_memory() const;
  std::vector<LayerOp> build_step_end(std::uint32_t stage) const;
  std::vector<std::vector<std::uint64_t>> offsets_;
  std::vector<std::vector<LayerOp>> step_end_;  // [stage]  // [stage][slot] prefix sums; size p x (2mv + 1)
};

}  // namespace warpsim::workload
