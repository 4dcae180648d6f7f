// Lazy per-GPU op stream (see gpu_program.hpp).
#include "models/workload/gpu_program.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace warpsim::workload {

GpuProgram::GpuProgram(std::shared_ptr<const Job> job, std::uint32_t rank, std::uint32_t steps)
    : job_(std::move(job)), rank_(rank), steps_(steps) {
  if (!job_) throw std::invalid_argument("GpuProgram: null job");
  if (rank_ >= job_->world_size()) {
    throw std::invalid_argument("GpuProgram: rank " + std::to_string(rank_) + " >= world size " +
                                std::to_string(job_->world_size()));
  }
  stage_ = job_->stage_of(rank_);
  slot_ops_ = job_->slot_offset(stage_, job_->schedule().slots_per_stage());
}

bool GpuProgram::checkpoint_after(std::uint32_t step) const {
  const auto every = job_->params().training.checkpoint_interval_steps;
  return every != 0 && (step + 1) % every == 0;
}

std::uint64_t GpuProgram::step_start(std::uint32_t step) const {
  const auto every = job_->params().training.checkpoint_interval_steps;
  return std::uint64_t{step} * ops_per_step() + (every ? step / every : 0);
}

GpuProgram::Position GpuProgram::position(std::uint64_t i) const {
  if (i >= size()) throw std::out_of_range("GpuProgram: op index " + std::to_string(i) + " past the end");
  auto step = static_cast<std::uint32_t>(i / (ops_per_step() + 1));
  while (step + 1 < steps_ && step_start(step + 1) <= i) ++step;
  Position p;
  p.step = step;
  const std::uint64_t local = i - step_start(step);
  const std::uint64_t slots = job_->schedule().slots_per_stage();
  if (local >= slot_ops_) {
    p.slot = slots;
    p.in_slot = local - slot_ops_;
    return p;
  }
  // Offsets are prefix sums: the slot is the last one starting at or before `local`.
  std::uint64_t lo = 0, hi = slots;
  while (hi - lo > 1) {
    const std::uint64_t mid = (lo + hi) / 2;
    if (job_->slot_offset(stage_, mid) <= local)
      lo = mid;
    else
      hi = mid;
  }
  p.slot = lo;
  p.in_slot = local - job_->slot_offset(stage_, lo);
  return p;
}

Op GpuProgram::op(std::uint64_t i) const {
  const Position p = position(i);
  if (p.slot < job_->schedule().slots_per_stage()) return slot_op(p.step, p.slot, p.in_slot);
  const auto& tail = job_->step_end_ops(stage_);
  Op o;
  if (p.in_slot < tail.size()) {
    o = layer_op(tail[p.in_slot]);
  } else {
    o.kind = OpKind::kCheckpointWrite;
    o.phase = Phase::kCheckpoint;
    o.name = "checkpoint_write";
    o.comm_bytes = static_cast<std::uint64_t>(std::llround(job_->checkpoint_bytes() / job_->world_size()));
  }
  o.step = p.step;
  return o;
}

Op GpuProgram::layer_op(const LayerOp& t) const {
  Op o;
  o.kind = t.kind;
  o.phase = t.phase;
  o.name = t.name;
  o.flops = t.flops;
  o.bytes = t.bytes;
  o.dtype = t.dtype;
  o.gemm = t.gemm;
  o.kernel = t.kernel;
  o.attention = t.attention;
  o.route = t.route;
  o.route_fixed_bytes = t.route_fixed_bytes;
  if (t.kind == OpKind::kDataRead) o.comm_bytes = t.comm_bytes;
  if (t.kind == OpKind::kCollective) {
    o.collective = t.collective;
    o.group_kind = t.group;
    o.group = job_->group(rank_, t.group);
    o.comm_bytes = t.comm_bytes;
  }
  return o;
}

RouteKey GpuProgram::route_key(const Op& o) const {
  return {o.layer, o.step, o.microbatch, job_->group(rank_, GroupKind::kExpert).first};
}

// A routed-expert compute op on a skewed job: this GPU processes n x share of the group's pairs instead of
// the balanced 1/n, so its token-proportional work (FLOPs, activation bytes, GEMM rows) scales by n x share.
void GpuProgram::routed(Op& o) const {
  const MoeRouting& r = job_->routing();
  if (r.balanced()) return;
  const GroupDesc g = job_->group(rank_, GroupKind::kExpert);
  const double f = g.size() * r.share(route_key(o), g.index_of(rank_));
  o.flops *= f;
  o.bytes = o.route_fixed_bytes + (o.bytes - o.route_fixed_bytes) * f;
  o.gemm.m *= f;
}

Op GpuProgram::p2p(bool send, std::uint32_t step, const ScheduleSlot& s) const {
  const auto& sched = job_->schedule();
  const std::uint32_t p = sched.stages(), v = sched.chunks();
  std::uint32_t peer_stage = 0;
  ScheduleSlot consumer = s;  // the tag names the slot that consumes the message
  if (send && sched.dual()) {
    peer_stage = sched.send_peer(stage_, s);  // the consumer runs the same chunk (model copy)
  } else if (send) {
    if (s.forward) {
      peer_stage = stage_ + 1 < p ? stage_ + 1 : 0;
      consumer.chunk = stage_ + 1 < p ? s.chunk : s.chunk + 1;
    } else {
      peer_stage = stage_ > 0 ? stage_ - 1 : p - 1;
      consumer.chunk = stage_ > 0 ? s.chunk : s.chunk - 1;
    }
  } else {
    peer_stage = sched.producer(stage_, s)->stage;
  }
  Op o;
  o.kind = send ? OpKind::kSend : OpKind::kRecv;
  o.phase = s.forward ? Phase::kForward : Phase::kBackward;
  o.name = send ? (s.forward ? "pp_send_activation" : "pp_send_grad")
                : (s.forward ? "pp_recv_activation" : "pp_recv_grad");
  // Scatter/gather: each TP rank carries its 1/TP slice; the receiver all-gathers (pp_gather below).
  o.comm_bytes =
      job_->layer_ops().activation_bytes / (job_->degrees().pp_scatter_gather ? job_->degrees().tp : 1);
  o.peer = rank_ + peer_stage * job_->pipeline_stride() - stage_ * job_->pipeline_stride();
  o.tag = ((std::uint64_t{step} * 2 + (s.forward ? 0 : 1)) * sched.microbatches() + consumer.microbatch) * v +
          consumer.chunk;
  return o;
}

Op GpuProgram::pp_gather(bool forward) const {
  Op o;
  o.kind = OpKind::kCollective;
  o.phase = forward ? Phase::kForward : Phase::kBackward;
  o.name = forward ? "pp_activation_allgather" : "pp_grad_allgather";
  o.collective = CollectiveKind::kAllGather;
  o.group_kind = GroupKind::kTensor;
  o.group = job_->group(rank_, GroupKind::kTensor);
  o.comm_bytes = job_->layer_ops().activation_bytes;  // the gathered (whole) tensor
  return o;
}

Op GpuProgram::slot_op(std::uint32_t step, std::uint64_t k, std::uint64_t pos) const {
  const auto& sched = job_->schedule();
  const auto& L = job_->layer_ops();
  const ScheduleSlot s = sched.slot(stage_, k);
  const bool first = sched.first_virtual(stage_, s.chunk);
  const bool last = sched.last_virtual(stage_, s.chunk);
  const bool p2p_on = sched.stages() > 1;
  const std::uint32_t layer0 = job_->first_layer(stage_, s.chunk);

  const auto finish = [&](Op o, std::uint32_t layer) {
    o.step = step;
    o.microbatch = sched.step_microbatch(s);
    o.chunk = s.chunk;
    o.layer = layer;
    if (o.route == kRouteCompute) routed(o);
    return o;
  };
  if (s.weight) {
    // A W pass: each layer's weight-gradient ops, in the backward's layer order (top down; an MoE model's
    // leading dense layers last).
    const std::uint32_t lc = job_->layers_in_chunk(stage_);
    const std::uint32_t nd = job_->leading_dense_in_chunk(stage_, s.chunk);
    const auto& moe_w = L.weight_grad;
    const std::uint64_t moe_ops = std::uint64_t{lc - nd} * moe_w.size();
    if (pos < moe_ops) {
      const auto j = static_cast<std::uint32_t>(pos / moe_w.size());
      return finish(layer_op(moe_w[pos % moe_w.size()]), layer0 + lc - 1 - j);
    }
    const std::uint64_t q = pos - moe_ops;
    const auto& dense_w = L.dense_weight_grad;
    if (q < std::uint64_t{nd} * dense_w.size()) {
      const auto j = static_cast<std::uint32_t>(q / dense_w.size());
      return finish(layer_op(dense_w[q % dense_w.size()]), layer0 + nd - 1 - j);
    }
    throw std::logic_error("GpuProgram: weight-gradient op index out of range");
  }
  // A paired backward's receive moved to the start of its pair's forward (ScheduleSlot::paired).
  const bool has_recv = p2p_on && (s.forward ? !first : !last && !s.paired);
  const bool has_send = p2p_on && (s.forward ? !last : !first);
  const auto receive = [&](const ScheduleSlot& r, std::uint64_t& at, Op& out) {
    if (at == 0) {
      out = p2p(false, step, r);
      return true;
    }
    --at;
    if (job_->degrees().pp_scatter_gather) {
      if (at == 0) {
        out = pp_gather(r.forward);
        return true;
      }
      --at;
    }
    return false;
  };
  Op received;
  if (has_recv && receive(s, pos, received)) return finish(received, layer0);
  if (s.forward && s.paired) {
    const ScheduleSlot b = sched.slot(stage_, k + 1);
    if (p2p_on && !sched.last_virtual(stage_, b.chunk) && receive(b, pos, received)) {
      Op o = finish(received, layer0);  // reported as the backward's position
      o.microbatch = sched.step_microbatch(b);
      o.chunk = b.chunk;
      o.layer = job_->first_layer(stage_, b.chunk) + job_->layers_in_chunk(stage_) - 1;
      return o;
    }
  }
  const auto& pre = s.forward ? L.embedding_forward : L.head_backward;
  const bool pre_on = s.forward ? first : last;
  const auto& post = s.forward ? L.head_forward : L.embedding_backward;
  const bool post_on = s.forward ? last : first;
  const std::uint32_t lc = job_->layers_in_chunk(stage_);
  if (pre_on) {
    if (pos < pre.size()) return finish(layer_op(pre[pos]), s.forward ? layer0 : layer0 + lc - 1);
    pos -= pre.size();
  }
  // The chunk's layers: forward from layer0 up, backward from the top down (in reverse). An MoE model's
  // leading dense layers come first in the forward and last in the backward.
  const std::uint32_t nd = job_->leading_dense_in_chunk(stage_, s.chunk);
  const auto& moe_body = s.forward ? L.forward : L.backward;
  const auto& dense_body = s.forward ? L.dense_forward : L.dense_backward;
  const std::uint64_t moe_ops = std::uint64_t{lc - nd} * moe_body.size();
  const std::uint64_t dense_ops = std::uint64_t{nd} * dense_body.size();
  if (s.forward && pos < dense_ops) {
    const auto j = static_cast<std::uint32_t>(pos / dense_body.size());
    return finish(layer_op(dense_body[pos % dense_body.size()]), layer0 + j);
  }
  if (s.forward && pos < dense_ops + moe_ops) {
    const std::uint64_t q = pos - dense_ops;
    const auto j = static_cast<std::uint32_t>(q / moe_body.size());
    return finish(layer_op(moe_body[q % moe_body.size()]), layer0 + nd + j);
  }
  if (!s.forward && pos < moe_ops) {
    const auto j = static_cast<std::uint32_t>(pos / moe_body.size());
    return finish(layer_op(moe_body[pos % moe_body.size()]), layer0 + lc - 1 - j);
  }
  if (!s.forward && pos < moe_ops + dense_ops) {
    const std::uint64_t q = pos - moe_ops;
    const auto j = static_cast<std::uint32_t>(q / dense_body.size());
    return finish(layer_op(dense_body[q % dense_body.size()]), layer0 + nd - 1 - j);
  }
  pos -= moe_ops + dense_ops;
  if (post_on) {
    if (pos < post.size()) return finish(layer_op(post[pos]), s.forward ? layer0 + lc - 1 : layer0);
    pos -= post.size();
  }
  if (has_send && pos == 0) return finish(p2p(true, step, s), s.forward ? layer0 + lc - 1 : layer0);
  throw std::logic_error("GpuProgram: slot op index out of range");
}

}  // namespace warpsim::workload
