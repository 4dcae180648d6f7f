// Plain parameters of a training job: the model shape, its parallel decomposition, the training-loop settings
// and the compute-model overrides. Kept free of protobuf so models/ does not depend on the spec format;
// experiment/spec/job_spec.hpp converts a validated JobSpec into this struct (spec::to_job_params), following
// models/cluster/cluster_params.hpp. Field names follow the spec's field paths (model.hidden_size, ...) so
// errors about either name the same field. Every count, size and time carries its unit in its name or its
// comment; the defaults are the spec's "0 = default" values made explicit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/workload/gpu_profile.hpp"

namespace warpsim::workload {

enum class Norm : std::uint8_t {
  kLayerNorm,  // weight + bias (2 x hidden_size parameters)
  kRmsNorm,    // weight only (hidden_size parameters)
};

enum class PipelineScheduleKind : std::uint8_t {
  kOneFOneB,         // 1F1B
  kInterleaved1F1B,  // virtual_stages_per_rank model chunks per pipeline rank (Narayanan et al. 2021)
  kZeroBubbleH1,     // ZB-H1 (Qi et al., ICLR 2024, arXiv 2401.10241): B/W split, W fills the cool-down
  kDualPipe,         // DualPipe (DeepSeek-V3, arXiv 2412.19437): bidirectional, two model copies per rank
};

// Activation recomputation (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
// Transformer Models", arXiv 2205.05198): what the backward pass recomputes from saved inputs.
enum class RecomputeMode : std::uint8_t {
  kNone,       // every activation is kept until its backward
  kSelective,  // the attention core (QK^T, softmax, dropout, attention over V) is recomputed (section 5)
  kFull,       // each layer's whole forward is recomputed from its input before its backward (section 4.3)
};

// Context parallelism's communication, as Transformer Engine implements it (Megatron-Core's --cp-comm-type;
// transformer_engine/pytorch attention, AttnFuncWithCPAndKVP2P / ...KVAllGather / ...QKVOA2A).
enum class CpCommType : std::uint8_t {
  kP2p,        // K/V ring: cp - 1 exchanges with the neighbours, overlapped with the attention block by block
  kAllGather,  // K and V all-gathered before the attention (and again before its backward), not overlapped
  kAllToAll,   // all-to-alls switch from a sequence split to a head split around a full-sequence attention
};

enum class Optimizer : std::uint8_t {
  kAdam,  // fp32 master weights + two moments
  kSgd,   // fp32 master weights + momentum
};

// Transformer shape. Dense when num_experts <= 1, mixture-of-experts otherwise: every layer's MLP is MoE
// except the first first_dense_layers (DeepSeek's first_k_dense_replace), which have a dense MLP of
// ffn_hidden_size. docs/workload.md "DeepSeek-style MoE" cites the shapes.
struct ModelParams {
  std::uint32_t num_layers = 0;
  std::uint32_t hidden_size = 0;
  // Dense MLP width; also each routed expert's width when moe_ffn_hidden_size is 0 (Mixtral style).
  std::uint32_t ffn_hidden_size = 0;
  std::uint32_t num_attention_heads = 0;
  std::uint32_t num_kv_heads = 0;  // grouped-query attention; 0 = num_attention_heads
  std::uint32_t seq_length_tokens = 0;
  std::uint32_t vocab_size = 0;
  std::uint32_t num_experts = 1;  // 0 or 1 = dense MLP
  std::uint32_t moe_top_k = 1;    // experts per token (MoE only)
  DType dtype = DType::kBf16;     // weights/activations and GEMM precision
  Norm norm = Norm::kLayerNorm;
  bool gated_mlp = false;                    // SwiGLU-style MLP with three weight matrices
  bool linear_bias = false;                  // biases on the linear layers (GPT-3 style)
  bool learned_position_embeddings = false;  // seq_length_tokens x hidden_size extra parameters
  bool untied_embeddings = false;            // separate output projection (vocab_size x hidden_size)
  bool fused_attention = false;              // flash-style attention: no seq^2 score tensor in HBM
  bool causal_attention = true;              // decoder (causal) self-attention; false: bidirectional
  double attention_dropout = 0;              // dropout on the attention probabilities, [0, 1)
  double hidden_dropout = 0;                 // dropout in the residual bias-dropout-adds, [0, 1)
  bool cross_entropy_loss_fusion = false;    // Megatron-Core's compiled cross entropy (fewer HBM passes)
  // DeepSeek-style MoE (MoE only). Megatron-LM's --moe-ffn-hidden-size, --moe-shared-expert-intermediate-size
  // (here count x width) and --moe-layer-freq's leading dense layers.
  std::uint32_t moe_ffn_hidden_size = 0;            // each routed expert's FFN width; 0 = ffn_hidden_size
  std::uint32_t num_shared_experts = 0;             // experts every token passes through (no routing)
  std::uint32_t shared_expert_ffn_hidden_size = 0;  // each shared expert's width; 0 = the routed width
  std::uint32_t first_dense_layers = 0;             // the first k layers have a dense MLP
  // Multi-head latent attention (DeepSeek-V2, arXiv 2405.04434, section 2.1): on when kv_lora_rank > 0.
  std::uint32_t q_lora_rank = 0;  // query compression rank; 0 = queries projected directly from the hidden
  std::uint32_t kv_lora_rank = 0;
  std::uint32_t qk_nope_head_dim = 0;  // per-head query/key dims without rotary position embedding
  std::uint32_t qk_rope_head_dim = 0;  // per-head (decoupled) rotary dims; the key's is shared by all heads
  std::uint32_t v_head_dim = 0;
  // Token-routing imbalance (moe_routing.hpp): 0 = perfectly balanced routing; > 0 = each expert's share of
  // the tokens is proportional to exp(skew x z), z standard normal drawn per (seed, layer, step,
  // micro-batch, expert-data replica, expert) from the counter-based RNG.
  double moe_routing_skew = 0;
  std::uint64_t moe_routing_seed = 0;
};

// Parallel degrees, each >= 1 (GPUs per dimension; world size = TP x PP x DP x CP).
struct ParallelismParams {
  std::uint32_t tensor_parallel = 1;
  std::uint32_t pipeline_parallel = 1;
  std::uint32_t data_parallel = 1;
  std::uint32_t context_parallel = 1;  // ring attention over sequence chunks
  std::uint32_t expert_parallel = 1;   // carved out of the data-parallel dimension
  PipelineScheduleKind pipeline_schedule = PipelineScheduleKind::kOneFOneB;
  std::uint32_t virtual_stages_per_rank = 1;  // kInterleaved1F1B only
  std::uint32_t zero_stage = 0;               // 0, 1, 2 or 3 (3 = FSDP-style parameter sharding)
  bool sequence_parallel = false;             // TP uses reduce-scatter/all-gather instead of all-reduce
  // Megatron-LM's scatter/gather pipeline optimization: TP > 1 without sequence parallelism only.
  bool pipeline_scatter_gather = false;
  // Each pipeline send blocks the sending GPU until it has left the NIC (PP > 1 only).
  bool pipeline_p2p_sync = false;
  // Transformer layers on the first / last pipeline stage; 0 = not set (that stage gets the even share of
  // what the set ones leave). Megatron-LM's --decoder-{first,last}-pipeline-num-layers (stage_layers.hpp).
  std::uint32_t first_stage_layers = 0;
  std::uint32_t last_stage_layers = 0;
  // Expert all-to-alls in two phases when the expert group spans nodes with several members on each: an
  // NVLink phase among a node's members, then one inter-node exchange per rail (moe_routing.hpp).
  bool hierarchical_all_to_all = false;
  // How context parallelism exchanges the attention's inputs (Transformer Engine's cp_comm_type).
  CpCommType cp_comm_type = CpCommType::kP2p;
};

struct TrainingParams {
  std::uint64_t global_batch_sequences = 0;
  std::uint32_t micro_batch_sequences = 1;
  RecomputeMode activation_recompute = RecomputeMode::kNone;
  std::uint64_t grad_bucket_bytes = 0;  // DP gradient bucket size; 0 = one bucket per pipeline stage
  Optimizer optimizer = Optimizer::kAdam;
  bool grad_reduce_fp32 = false;                // reduce gradients in fp32 instead of the model dtype
  std::uint32_t checkpoint_interval_steps = 0;  // 0 = no checkpoints
  std::uint64_t checkpoint_bytes = 0;           // whole-job checkpoint size; 0 = weights + optimizer state
  // Algorithm of the data-parallel gradient all-reduces, by name ("auto": NCCL's choice per all-reduce,
  // "ring" or "tree"): a name rather than an enum because the cluster model looks it up among its
  // collective algorithms.
  std::string dp_allreduce_algorithm = "auto";
  // The tree's pipeline chunk size; 0 = NCCL's (512 KiB per channel, training_program.hpp). Not with "ring".
  std::uint64_t dp_tree_chunk_bytes = 0;
  // Accept a job whose estimated peak memory per GPU (memory_estimate.hpp) exceeds the GPU's HBM capacity;
  // false: Job's constructor refuses it.
  bool allow_hbm_overflow = false;
  // Reduce each data-parallel (and expert-data) gradient bucket on the GPU's communication stream as soon as
  // the last micro-batch's backward produced it, overlapping the backward (grad_buckets.hpp). Default off,
  // as Megatron-LM's --overlap-grad-reduce (docs/workload.md).
  bool overlap_grad_reduce = false;
  // Tensor-parallel communication overlap (Transformer Engine userbuffers; training_program.hpp): off by
  // default, as Megatron-Core's --tp-comm-overlap. Applies with sequence parallelism only.
  bool tp_comm_overlap = false;
  std::uint32_t tp_comm_overlap_splits = 4;  // forward reduce-scatter pieces (NeMo's H100 ub configs)
  std::uint32_t tp_comm_overlap_sms = 16;    // SMs the reduce-scatter kernels take from the GEMM
  // NCCL's per-call launch and protocol latency and protocol wire bytes on the training program's
  // collectives and pipeline receives (docs/collectives.md): "auto" (NCCL's choice by size, the default),
  // "ll", "ll128" or "simple" (forced), "none" (not charged).
  std::string nccl_protocol = "auto";
  // The HBM traffic of reductions (two reads and a write per reduced slice) is not charged (default false:
  // charged at the GPU's memory-bound kernel rate).
  bool free_reductions = false;
  // Overlap the ZeRO-1/2 parameter all-gathers with the next step's forward (param_gather.hpp): off by
  // default, as Megatron-Core's --overlap-param-gather.
  bool overlap_param_gather = false;
  // Context parallelism's KV ring overlapped with the attention that consumes it, block by block, as
  // Transformer Engine's ring attention (cp_comm_type p2p, Megatron-Core's default) always runs it
  // (training_program.hpp). On by default; false: the whole ring before the attention (warpsim before
  // 2026-12-07; spec training.no_cp_comm_overlap).
  bool cp_comm_overlap = true;
  // ZeRO-3 all-gathers each layer's parameters one layer ahead on the communication stream, as FSDP and
  // DeepSpeed prefetch them (training_program.hpp). On by default; false: each gather blocks right before
  // its layer (warpsim before 2026-12-07; spec training.no_zero3_prefetch).
  bool zero3_prefetch = true;
};

// Compute-time model overrides (compute_model.hpp); unset = the EfficiencyParams the Job is given.
struct ComputeModelParams {
  std::optional<double> compute_eff_max;  // asymptotic GEMM efficiency, fraction of the dense peak, (0, 1]
  std::optional<double> memory_eff_max;   // asymptotic HBM efficiency, fraction of the bandwidth, (0, 1]
  std::optional<double> op_overhead_us;   // fixed per-kernel time in microseconds, >= 0
  KernelScales scale;                     // multipliers on the values in force (sensitivity studies)
};

// Job ranks [first_rank, first_rank + ranks) run on GPUs of profile `gpu_type`: a cluster with node groups
// of several GPU types (docs/workload.md, "Mixed GPU generations"). `origin` names the spec field the range
// came from, for errors (e.g. "cluster.node_group[1]").
struct RankGpuRange {
  std::uint32_t first_rank = 0;
  std::uint32_t ranks = 0;
  std::string gpu_type;
  std::string origin;
};

struct JobParams {
  std::string name;
  std::string gpu_type;  // a shipped GPU profile name, e.g. "A100-80GB" (gpu_profile.hpp)
  // Per-rank GPU types, in rank order, covering every rank exactly once; empty = every rank on gpu_type.
  // gpu_type stays the job's reference profile (MFU/HFU peak, power model).
  std::vector<RankGpuRange> rank_gpu_types;
  ModelParams model;
  ParallelismParams parallelism;
  TrainingParams training;
  ComputeModelParams compute_model;

  // GPUs of the job: TP x PP x DP x CP.
  std::uint64_t world_size_gpus() const {
    return std::uint64_t{parallelism.tensor_parallel} * parallelism.pipeline_parallel *
           parallelism.data_parallel * parallelism.context_parallel;
  }
  // Micro-batches per step, per pipeline (per data-parallel replica).
  std::uint64_t microbatches_per_step() const {
    return training.global_batch_sequences /
           (std::uint64_t{training.micro_batch_sequences} * parallelism.data_parallel);
  }
};

}  // namespace warpsim::workload
