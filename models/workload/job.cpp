// Job: validation, derived quantities and the arithmetic rank layout (see job.hpp).
#include "models/workload/job.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>

#include "models/workload/memory_estimate.hpp"

namespace warpsim::workload {

namespace {

[[noreturn]] void invalid() {
  throw std::invalid_argument("job: invalid parameters (validate the spec first)");
}

// The structural invariants the arithmetic below divides by; spec::to_job_params reports violations by
// field, so this only guards params built by hand.
JobParams checked(JobParams p) {
  const auto& m = p.model;
  const auto& d = p.parallelism;
  const auto& t = p.training;
  for (const std::uint64_t v :
       {std::uint64_t{m.num_layers}, std::uint64_t{m.hidden_size}, std::uint64_t{m.ffn_hidden_size},
        std::uint64_t{m.num_attention_heads}, std::uint64_t{m.seq_length_tokens}, std::uint64_t{m.vocab_size},
        std::uint64_t{d.tensor_parallel}, std::uint64_t{d.pipeline_parallel}, std::uint64_t{d.data_parallel},
        std::uint64_t{d.context_parallel}, std::uint64_t{d.expert_parallel},
        std::uint64_t{d.virtual_stages_per_rank}, std::uint64_t{t.micro_batch_sequences},
        t.global_batch_sequences}) {
    if (v == 0) invalid();
  }
  if ((m.kv_lora_rank == 0 && m.hidden_size % m.num_attention_heads != 0) ||
      d.data_parallel % d.expert_parallel != 0 ||
      t.global_batch_sequences % (std::uint64_t{t.micro_batch_sequences} * d.data_parallel) != 0) {
    invalid();
  }
  if (p.world_size_gpus() > std::numeric_limits<std::uint32_t>::max() / 2) {
    throw std::invalid_argument("job spec: world_size_gpus: too many GPUs for 32-bit ranks");
  }
  return p;
}

// DualPipe's two chunks per rank are whole stages of the two model copies: the even split only.
JobParams checked_schedule(JobParams p) {
  const auto& d = p.parallelism;
  if (d.pipeline_schedule == PipelineScheduleKind::kDualPipe &&
      (d.first_stage_layers != 0 || d.last_stage_layers != 0)) {
    throw std::invalid_argument(
        "job spec: parallelism.first_stage_layers: uneven stages are not supported with DUAL_PIPE");
  }
  return p;
}

PipelineSchedule make_schedule(const Degrees& d, std::uint32_t microbatches) {
  if (d.dual_pipe) return PipelineSchedule::dual_pipe(d.pp, microbatches);
  if (d.split_backward) return PipelineSchedule::zero_bubble_h1(d.pp, microbatches);
  return PipelineSchedule(d.pp, microbatches, d.vpp);
}

const GpuProfile& checked_gpu(const JobParams& p) {
  const GpuProfile& g = find_gpu_profile(p.gpu_type, "job spec: gpu_type");
  const DType d = p.model.dtype;
  if (g.peak_flops(d) <= 0) {
    throw std::invalid_argument("job spec: model.dtype: " + std::string(to_string(d)) +
                                " is not supported by " + std::string(g.name));
  }
  return g;
}

// The params' compute_model fields, where set, replace `base`'s values; the compute model checks ranges and
// its errors get the spec field's path.
EfficiencyParams with_overrides(const ComputeModelParams& c, EfficiencyParams base) {
  if (c.compute_eff_max) base.compute_eff_max = *c.compute_eff_max;
  if (c.memory_eff_max) base.memory_eff_max = *c.memory_eff_max;
  if (c.op_overhead_us) base.op_overhead_s = *c.op_overhead_us * 1e-6;
  base.scale = c.scale;
  return base;
}

ComputeModel checked_compute(const GpuProfile& gpu, const JobParams& params, EfficiencyParams base,
                             std::shared_ptr<const MeasuredTable> measured) {
  const EfficiencyParams p = with_overrides(params.compute_model, base);
  if (params.compute_model.op_overhead_us && !(*params.compute_model.op_overhead_us >= 0)) {
    throw std::invalid_argument("job spec: compute_model.op_overhead_us: must be >= 0");
  }
  try {
    return ComputeModel(gpu, p, std::move(measured));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("job spec: compute_model.") + e.what());
  }
}

}  // namespace

Job::Job(JobParams params, EfficiencyParams efficiency, std::shared_ptr<const MeasuredTable> measured)
    : params_(checked_schedule(checked(std::move(params)))),
      shape_(ModelShape::from_params(params_.model)),
      deg_(Degrees::from_params(params_.parallelism)),
      gpu_(&checked_gpu(params_)),
      compute_(checked_compute(*gpu_, params_, efficiency, measured)),
      ops_(build_layer_ops(shape_, deg_, params_.training.micro_batch_sequences,
                           params_.training.activation_recompute)),
      schedule_(make_schedule(deg_, static_cast<std::uint32_t>(params_.microbatches_per_step()))),
      world_(static_cast<std::uint32_t>(params_.world_size_gpus())),
      stage_layers_(static_cast<std::uint32_t>(shape_.layers), deg_.pp, deg_.dual_pipe ? 1 : deg_.vpp,
                    params_.parallelism.first_stage_layers, params_.parallelism.last_stage_layers) {
  // Several GPU types (node groups): one compute model per distinct type, the same overrides for each.
  std::uint64_t next_rank = 0;
  for (const RankGpuRange& r : params_.rank_gpu_types) {
    if (r.first_rank != next_rank || r.ranks == 0) {
      throw std::invalid_argument("job: rank_gpu_types: ranges must cover the ranks in order (" + r.origin +
                                  ")");
    }
    next_rank += r.ranks;
    const GpuProfile& g = find_gpu_profile(r.gpu_type, r.origin + ".gpu_type");
    if (g.peak_flops(shape_.dtype) <= 0) {
      throw std::invalid_argument("job spec: model.dtype: " + std::string(to_string(shape_.dtype)) +
                                  " is not supported by " + std::string(g.name) + " (" + r.origin + ")");
    }
    std::uint32_t index = 0;
    while (index < computes_.size() && computes_[index].gpu().name != g.name) ++index;
    if (index == computes_.size()) computes_.push_back(checked_compute(g, params_, efficiency, measured));
    if (rank_models_.empty() || rank_models_.back().second != index)
      rank_models_.emplace_back(r.first_rank, index);
  }
  if (!params_.rank_gpu_types.empty() && next_rank != world_) {
    throw std::invalid_argument("job: rank_gpu_types: ranges cover " + std::to_string(next_rank) + " of " +
                                std::to_string(world_) + " ranks");
  }
  if (shape_.moe()) {
    routing_ = MoeRouting(static_cast<std::uint32_t>(shape_.experts), deg_.ep,
                          static_cast<std::uint32_t>(shape_.top_k), shape_.routing_skew, shape_.routing_seed);
  }
  offsets_.resize(deg_.pp);
  for (std::uint32_t s = 0; s < deg_.pp; ++s) {
    auto& o = offsets_[s];
    o.resize(schedule_.slots_per_stage() + 1);
    for (std::uint64_t k = 0; k < schedule_.slots_per_stage(); ++k) {
      o[k + 1] = o[k] + slot_op_count(s, schedule_.slot(s, k));
    }
    step_end_.push_back(build_step_end(s));
  }
  if (!params_.training.allow_hbm_overflow) check_memory();
}

void Job::check_memory() const {
  const MemoryEstimate mem = estimate_memory(*this);
  // The stage furthest over its GPUs' HBM (each stage against the smallest HBM among its ranks; on a
  // single-type cluster that is the peak stage).
  std::uint32_t worst = mem.peak_stage;
  double worst_over = mem.peak().total_bytes() - mem.stage_hbm_bytes[worst];
  for (std::uint32_t s = 0; s < mem.stages.size(); ++s) {
    const double over = mem.stages[s].total_bytes() - mem.stage_hbm_bytes[s];
    if (over > worst_over) worst = s, worst_over = over;
  }
  if (worst_over > 0) {
    throw std::invalid_argument("job spec: " + describe_overflow(mem, worst, mem.stage_hbm_gpu[worst]) +
                                "; set training.allow_hbm_overflow: true to simulate it anyway");
  }
}

std::uint32_t Job::model_index(std::uint32_t rank) const {
  const auto it = std::upper_bound(rank_models_.begin(), rank_models_.end(), rank,
                                   [](std::uint32_t r, const auto& e) { return r < e.first; });
  return std::prev(it)->second;
}

std::vector<const ComputeModel*> Job::stage_computes(std::uint32_t stage) const {
  if (rank_models_.empty()) return {&compute_};
  // A stage's ranks are the contiguous block [stage * stride, (stage + 1) * stride).
  const std::uint32_t begin = stage * pipeline_stride(), end = begin + pipeline_stride();
  std::vector<const ComputeModel*> out;
  for (std::size_t i = 0; i < rank_models_.size(); ++i) {
    const std::uint32_t lo = rank_models_[i].first;
    const std::uint32_t hi = i + 1 < rank_models_.size() ? rank_models_[i + 1].first : world_;
    if (hi <= begin || lo >= end) continue;
    const ComputeModel* m = &computes_[rank_models_[i].second];
    if (std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
  }
  return out;
}

RankCoords Job::coords(std::uint32_t rank) const {
  RankCoords c;
  c.tp = rank % deg_.tp;
  rank /= deg_.tp;
  c.cp = rank % deg_.cp;
  rank /= deg_.cp;
  c.dp = rank % deg_.dp;
  c.pp = rank / deg_.dp;
  return c;
}

std::uint32_t Job::rank_of(const RankCoords& c) const {
  return c.tp + deg_.tp * (c.cp + deg_.cp * (c.dp + deg_.dp * c.pp));
}

GroupDesc Job::group(std::uint32_t rank, GroupKind kind) const {
  const RankCoords c = coords(rank);
  const std::uint32_t t = deg_.tp, cp = deg_.cp;
  GroupDesc g;
  switch (kind) {
    case GroupKind::kTensor:
      g = {rank - c.tp, 1, t, 0, 1};
      break;
    case GroupKind::kContext:
      g = {rank - c.cp * t, t, cp, 0, 1};
      break;
    case GroupKind::kDataContext:
      g = {rank - c.cp * t - c.dp * t * cp, t, cp * deg_.dp, 0, 1};
      break;
    case GroupKind::kExpert: {
      const std::uint32_t e = c.dp % deg_.ep;
      g = {rank - e * t * cp, t * cp, deg_.ep, 0, 1};
      break;
    }
    case GroupKind::kExpertDataContext: {
      const std::uint32_t e = c.dp % deg_.ep;
      g = {rank - c.cp * t - (c.dp - e) * t * cp, t, cp, t * cp * deg_.ep, deg_.dp / deg_.ep};
      break;
    }
    case GroupKind::kEmbedding:
      g = {rank - c.pp * pipeline_stride(), std::max<std::uint32_t>(1, (deg_.pp - 1) * pipeline_stride()),
           deg_.pp > 1 ? 2u : 1u, 0, 1};
      break;
  }
  return g;
}

std::uint64_t Job::slot_op_count(std::uint32_t stage, const ScheduleSlot& s) const {
  const bool first = schedule_.first_virtual(stage, s.chunk);
  const bool last = schedule_.last_virtual(stage, s.chunk);
  const bool p2p = deg_.pp > 1;
  std::uint64_t n = 0;
  // A receive is followed by the TP all-gather of the scattered activation (scatter/gather).
  const std::uint64_t recv_ops = deg_.pp_scatter_gather ? 2 : 1;
  const std::uint64_t dense = leading_dense_in_chunk(stage, s.chunk);
  if (s.weight) {
    // A W pass: the chunk's layers' weight-gradient GEMMs (and ZeRO-3 gradient reduce-scatters), no p2p.
    return std::uint64_t{layers_in_chunk(stage) - dense} * ops_.weight_grad.size() +
           dense * ops_.dense_weight_grad.size();
  }
  if (s.forward) {
    n += (p2p && !first) * recv_ops + (p2p && !last);
    // A DualPipe pair's forward also receives its backward's gradient (the other chunk's).
    if (s.paired) n += (p2p && !schedule_.last_virtual(stage, 1 - s.chunk)) * recv_ops;
    n += first ? ops_.embedding_forward.size() : 0;
    n += last ? ops_.head_forward.size() : 0;
    n += std::uint64_t{layers_in_chunk(stage) - dense} * ops_.forward.size() +
         dense * ops_.dense_forward.size();
  } else {
    n += (p2p && !last && !s.paired) * recv_ops + (p2p && !first);
    n += first ? ops_.embedding_backward.size() : 0;
    n += last ? ops_.head_backward.size() : 0;
    n += std::uint64_t{layers_in_chunk(stage) - dense} * ops_.backward.size() +
         dense * ops_.dense_backward.size();
  }
  return n;
}

std::uint32_t Job::leading_dense_in_chunk(std::uint32_t stage, std::uint32_t chunk) const {
  if (!shape_.moe()) return 0;
  const std::uint64_t first = first_layer(stage, chunk), k = shape_.dense_layers;
  return first >= k ? 0
                    : static_cast<std::uint32_t>(std::min<std::uint64_t>(k - first, layers_in_chunk(stage)));
}

std::uint32_t Job::leading_dense_in_stage(std::uint32_t stage) const {
  std::uint32_t n = 0;
  for (std::uint32_t c = 0; c < deg_.vpp; ++c) n += leading_dense_in_chunk(stage, c);
  return n;
}

double Job::layer_dense_params(std::uint32_t stage) const {
  const double dense = leading_dense_in_stage(stage);
  const double layers = layers_in_stage(stage) - dense;
  return layers * ops_.dense_layer_params_per_gpu + dense * ops_.first_dense_layer_params_per_gpu;
}

double Job::dense_grad_params(std::uint32_t stage) const {
  double n = layer_dense_params(stage);
  if (holds_embedding(stage)) n += ops_.embedding_params_per_gpu;
  if (holds_head(stage)) n += ops_.head_params_per_gpu;
  return n;
}

// The first / last virtual stage's rank: stage 0 / PP-1, and under DualPipe both (each end rank holds the
// first stage of one model copy and the last stage of the other).
bool Job::holds_embedding(std::uint32_t stage) const {
  return stage == 0 || (deg_.dual_pipe && stage == deg_.pp - 1);
}
bool Job::holds_head(std::uint32_t stage) const {
  return stage == deg_.pp - 1 || (deg_.dual_pipe && stage == 0);
}

double Job::expert_grad_params(std::uint32_t stage) const {
  return static_cast<double>(layers_in_stage(stage) - leading_dense_in_stage(stage)) *
         ops_.expert_layer_params_per_gpu;
}

// Gradients are reduced in the storage dtype (BF16 for an FP8 job: Transformer Engine's FP8 recipe keeps
// weight gradients in higher precision, docs/workload.md), or in fp32 when asked.
double Job::grad_bytes_per_param() const {
  return params_.training.grad_reduce_fp32 ? 4.0 : dtype_bytes(storage_dtype(shape_.dtype));
}

double Job::checkpoint_bytes() const {
  if (params_.training.checkpoint_bytes != 0) return static_cast<double>(params_.training.checkpoint_bytes);
  // Model weights in the model dtype + fp32 master weights + optimizer moments.
  const double state = params_.training.optimizer == Optimizer::kSgd ? 4 + 4 : 4 + 8;
  return count_params(shape_).total(shape_.layers) * (dtype_bytes(storage_dtype(shape_.dtype)) + state);
}

// Step-end ops of a stage: gradient synchronization, optimizer, ZeRO parameter all-gathers. The same
// for every GPU of the stage (GpuProgram fills in the groups).
std::vector<LayerOp> Job::build_step_end(std::uint32_t stage) const {
  const Job& j = *this;
  const std::uint32_t rank = stage * pipeline_stride();  // group sizes are the same on every rank of a stage
  std::vector<LayerOp> ops;
  const auto& d = j.degrees();
  const double e = dtype_bytes(storage_dtype(j.shape().dtype));  // weights live in BF16 in an FP8 job
  const double ge = j.grad_bytes_per_param();
  const std::uint64_t bucket = j.params().training.grad_bucket_bytes;
  const auto zero = d.zero;

  const auto collective = [&](std::string_view name, Phase phase, CollectiveKind k, GroupKind g,
                              double bytes) {
    LayerOp o;
    o.kind = OpKind::kCollective;
    o.phase = phase;
    o.name = name;
    o.collective = k;
    o.group = g;
    o.comm_bytes = static_cast<std::uint64_t>(std::llround(bytes));
    return o;
  };
  // Splits `bytes` into buckets of the configured size (the last one holds the remainder).
  const auto bucketed = [&](std::string_view name, Phase phase, CollectiveKind k, GroupKind g, double bytes) {
    if (bytes <= 0 || j.group(rank, g).size() <= 1) return;
    const double size = bucket ? static_cast<double>(bucket) : bytes;
    const auto n = static_cast<std::uint64_t>(std::ceil(bytes / size));
    for (std::uint64_t b = 0; b < n; ++b) {
      ops.push_back(collective(name, phase, k, g, std::min(size, bytes - b * size)));
    }
  };

  // The data loader prefetches the next step's batch once this step's last backward is done, so the read
  // overlaps the gradient sync and optimizer step and stalls the next step only if storage is slower: token
  // ids (int32) on the first stage, labels on the last, for this GPU's micro-batches (1/CP of each sequence).
  if (stage == 0 || stage == d.pp - 1) {
    LayerOp read;
    read.kind = OpKind::kDataRead;
    read.phase = Phase::kDataLoad;
    read.name = "data_loader_read";
    read.comm_bytes = j.microbatches() * j.micro_batch_sequences() * j.shape().seq / d.cp * 4;
    ops.push_back(read);
  }
  // Tied input/output embeddings live on the first and last stage; their gradients are summed first.
  if (d.pp > 1 && !j.shape().untied && (stage == 0 || stage == d.pp - 1)) {
    ops.push_back(collective("embedding_grad_allreduce", Phase::kGradSync, CollectiveKind::kAllReduce,
                             GroupKind::kEmbedding, j.layer_ops().embedding_params_per_gpu * ge));
  }
  // Dense gradients: ZeRO-3 already reduce-scattered the layers' gradients per micro-batch; what remains
  // are the embedding/head parameters.
  double dense = j.dense_grad_params(stage);
  double expert = j.expert_grad_params(stage);
  if (zero == 3) {
    dense -= j.layer_dense_params(stage);
    expert = 0;
  }
  const bool sharded = zero >= 1;
  const auto reduce = sharded ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce;
  bucketed(sharded ? "dp_grad_reducescatter" : "dp_grad_allreduce", Phase::kGradSync, reduce,
           GroupKind::kDataContext, dense * ge);
  bucketed(sharded ? "ep_grad_reducescatter" : "ep_grad_allreduce", Phase::kGradSync, reduce,
           GroupKind::kExpertDataContext, expert * ge);

  // Optimizer over the parameters this GPU owns (all of its TP/PP/EP shard, or 1/n of it under ZeRO).
  const double dp_n = j.group(rank, GroupKind::kDataContext).size();
  const double edp_n = j.group(rank, GroupKind::kExpertDataContext).size();
  const double owned = sharded ? j.dense_grad_params(stage) / dp_n + j.expert_grad_params(stage) / edp_n
                               : j.dense_grad_params(stage) + j.expert_grad_params(stage);
  const bool adam = j.params().training.optimizer != Optimizer::kSgd;
  LayerOp opt;
  opt.kind = OpKind::kCompute;
  opt.phase = Phase::kOptimizer;
  opt.name = "optimizer_step";
  opt.dtype = DType::kFp32;
  // The mixed-precision optimizer step as Megatron-LM runs it (MixedPrecisionOptimizer.step: prepare_grads,
  // the gradient norm, the inner optimizer, copy_main_params_to_model_params), pass by pass, in bytes per
  // owned parameter:
  //  - gradients reduced in the model dtype are copied into fp32 main gradients (read ge, write 4); fp32
  //    gradients are the main gradients already (.float() of an fp32 tensor copies nothing);
  //  - FP16 only (the dynamic loss scaler; BF16 has none): unscale in place and check for inf/nan (8);
  //  - the global gradient norm for clipping reads the main gradients (4); the clip itself rescales them only
  //    when the norm exceeds the threshold, which depends on the data and is not charged;
  //  - Adam (apex/TE FusedAdam): read gradient, weight and both moments, write weight and moments (28);
  //    SGD with momentum: read gradient, read/write weight and momentum (20);
  //  - the fp32 main weights are copied back to the model-dtype weights (read 4, write e).
  const double grad_copy = ge < 4 ? ge + 4 : 0;
  const double unscale = j.shape().dtype == DType::kFp16 ? 8 : 0;
  opt.bytes = owned * (grad_copy + unscale + 4 + (adam ? 28 : 20) + 4 + e);
  opt.flops = owned * (adam ? 12 : 4);
  ops.push_back(opt);

  // FP8 (Transformer Engine): each GEMM weight is cast to FP8 with its transpose once per step, on the first
  // micro-batch (Megatron-LM passes is_first_microbatch), reading 2 and writing 1 + 1 bytes per parameter.
  if (j.shape().dtype == DType::kFp8) {
    const double nd = j.leading_dense_in_stage(stage);
    const double layer_weights = (j.layers_in_stage(stage) - nd) * j.layer_ops().layer_params_per_gpu +
                                 nd * j.layer_ops().first_dense_layer_params_per_gpu;
    LayerOp cast;
    cast.kind = OpKind::kCompute;
    cast.phase = Phase::kOptimizer;
    cast.name = "fp8_weight_cast";
    cast.dtype = DType::kBf16;
    cast.bytes = layer_weights * (2 + 1 + 1);
    cast.flops = layer_weights;
    ops.push_back(cast);
  }

  if (zero == 1 || zero == 2) {
    bucketed("dp_param_allgather", Phase::kOptimizer, CollectiveKind::kAllGather, GroupKind::kDataContext,
             j.dense_grad_params(stage) * e);
    bucketed("ep_param_allgather", Phase::kOptimizer, CollectiveKind::kAllGather,
             GroupKind::kExpertDataContext, j.expert_grad_params(stage) * e);
  } else if (zero == 3) {
    bucketed("dp_param_allgather", Phase::kOptimizer, CollectiveKind::kAllGather, GroupKind::kDataContext,
             dense * e);
  }

  return ops;
}

}  // namespace warpsim::workload
