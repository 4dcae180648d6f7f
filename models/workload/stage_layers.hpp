// How a model's transformer layers are split over the pipeline: evenly (layers / (PP x VPP) per model chunk)
// or with explicit layer counts on the first and/or last pipeline stage and the rest split evenly over the
// middle stages, as Megatron-LM's --decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers
// do (megatron/core/transformer/transformer_config.py "Uneven PP" and transformer_layer.py
// get_transformer_layer_offset, NVIDIA/Megatron-LM at d98e8a64). Under interleaving each stage's layers are
// split evenly over its VPP chunks, and virtual stage c of the whole pipeline holds chunk c of every stage in
// stage order, so layer indices run stage 0 chunk 0, stage 1 chunk 0, ..., stage p-1 chunk 0, stage 0
// chunk 1.
#pragma once

#include <cstdint>
#include <vector>

namespace warpsim::workload {

class StageLayers {
 public:
  // first / last: layers on the first / last stage, 0 = not set (Megatron's None: that stage is a middle
  // stage). Throws std::invalid_argument naming the offending field (parallelism.first_stage_layers, ...)
  // when the split is impossible, with Megatron's rules: a set count is > 0 and divisible by `chunks`; the
  // remaining layers are divisible by the number of middle stages and each middle stage's share by `chunks`;
  // with no middle stage no layer may remain.
  StageLayers(std::uint32_t layers, std::uint32_t stages, std::uint32_t chunks, std::uint32_t first = 0,
              std::uint32_t last = 0);

  std::uint32_t stages() const { return static_cast<std::uint32_t>(per_stage_.size()); }
  std::uint32_t chunks() const { return chunks_; }
  bool even() const { return even_; }
  // Transformer layers on pipeline stage s (all of its chunks together).
  std::uint32_t stage(std::uint32_t s) const { return per_stage_[s]; }
  // Layers in one model chunk of stage s (every chunk of a stage holds the same number).
  std::uint32_t chunk(std::uint32_t s) const { return per_stage_[s] / chunks_; }
  // Global index of the first layer of chunk c on stage s.
  std::uint32_t first_layer(std::uint32_t s, std::uint32_t c) const { return c * round_ + chunk_prefix_[s]; }
  std::uint32_t max_stage() const;

 private:
  std::vector<std::uint32_t> per_stage_;
  std::vector<std::uint32_t> chunk_prefix_;  // sum of chunk(s') for s' < s
  std::uint32_t chunks_ = 1;
  std::uint32_t round_ = 0;  // layers in one virtual-stage round: sum over stages of chunk(s)
  bool even_ = true;
};

}  // namespace warpsim::workload
