// Workload op streams expanded into cluster GPU programs (see training_program.hpp).
#include "models/training/training_program.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>

#include "engine/hash.hpp"
#include "models/cluster/nccl_tuning.hpp"
#include "models/cluster/ring_order.hpp"
#include "models/training/tree_schedule.hpp"
#include "models/workload/grad_buckets.hpp"
#include "models/workload/param_gather.hpp"

namespace warpsim::training {

namespace {

using cluster::GpuOp;
using workload::CollectiveKind;
using workload::OpKind;

// Point-to-point tags live in [0, 2^31), collective tags in [2^31, 2^32), so a pipeline message is never
// counted against a collective step. The GPU LP matches receives by (peer, tag) counts, so a rare hash
// collision can only let a receive match a different message of the same peer early; it cannot deadlock
// as long as both sides post the same multiset of tags, which the shared derivation guarantees.
std::uint32_t p2p_tag(std::uint64_t tag) {
  return static_cast<std::uint32_t>(splitmix64_finalize(tag) & 0x7fffffffu);
}

// Only fields that every member of the group sees identically enter the tag (not the layer or the
// micro-batch, which differ between the first and last stage of the embedding group).
std::uint32_t collective_tag(const workload::Op& op, std::uint64_t step_index) {
  std::uint64_t h = splitmix64_finalize(op.step + 0x9e3779b97f4a7c15ull);
  for (const char c : op.name) h = splitmix64_finalize(h ^ static_cast<unsigned char>(c));
  h = splitmix64_finalize(h ^ (std::uint64_t{static_cast<std::uint8_t>(op.collective)} << 8 |
                               static_cast<std::uint8_t>(op.group_kind)));
  h = splitmix64_finalize(h ^ step_index);
  if (op.tag != 0) h = splitmix64_finalize(h ^ op.tag);  // a piece of a split collective (tp_comm_overlap)
  return static_cast<std::uint32_t>(h & 0x7fffffffu) | 0x80000000u;
}

std::uint64_t share(std::uint64_t bytes, std::uint32_t n) {
  return std::max<std::uint64_t>(1, (bytes + n - 1) / n);
}

// Ring steps of a collective over n members (all-to-all excluded).
std::uint64_t ring_steps(CollectiveKind kind, std::uint32_t n) {
  if (n <= 1) return 0;
  return kind == CollectiveKind::kAllReduce ? 2ull * (n - 1) : std::uint64_t{n} - 1;
}

}  // namespace

std::uint32_t rail_members_per_node(const workload::GroupDesc& group, std::uint32_t gpus_per_node) {
  const std::uint32_t n = group.size();
  if (gpus_per_node < 2 || n < 4) return 1;
  // One arithmetic progression first + i * stride (a two-level group whose outer stride continues the inner
  // one).
  std::uint32_t stride = 0;
  if (group.outer_size == 1 || group.inner_size == 1) {
    stride = group.outer_size == 1 ? group.inner_stride : group.outer_stride;
  } else if (group.outer_stride == group.inner_stride * group.inner_size) {
    stride = group.inner_stride;
  } else {
    return 1;
  }
  if (stride == 0 || stride >= gpus_per_node || gpus_per_node % stride != 0) return 1;
  if (group.first % gpus_per_node >= stride) return 1;  // the first node would hold fewer members
  const std::uint32_t local = gpus_per_node / stride;
  if (n % local != 0 || n / local < 2) return 1;  // one node: NVLink only, nothing to align
  return local;
}

std::uint32_t ring_channels(const workload::Op& op, const CollectiveOptions& options) {
  // Ring exchange is context parallelism's point-to-point KV passing, not an NCCL ring collective.
  const bool nccl_ring = op.collective == CollectiveKind::kAllReduce ||
                         op.collective == CollectiveKind::kReduceScatter ||
                         op.collective == CollectiveKind::kAllGather;
  if (op.kind != OpKind::kCollective || !nccl_ring || uses_tree(op, options)) return 1;
  return rail_members_per_node(op.group, options.gpus_per_node);
}

const char* to_string(CommClass c) {
  switch (c) {
    case CommClass::kTensor:
      return "tensor";
    case CommClass::kContext:
      return "context";
    case CommClass::kData:
      return "data";
    case CommClass::kExpert:
      return "expert";
    case CommClass::kPipeline:
      return "pipeline";
    case CommClass::kCheckpoint:
      return "checkpoint";
    case CommClass::kDataLoader:
      return "data loader";
    case CommClass::kCount:
      break;
  }
  return "?";
}

CommClass comm_class(const workload::Op& op) {
  switch (op.kind) {
    case OpKind::kSend:
    case OpKind::kRecv:
      return CommClass::kPipeline;
    case OpKind::kCheckpointWrite:
      return CommClass::kCheckpoint;
    case OpKind::kDataRead:
      return CommClass::kDataLoader;
    default:
      break;
  }
  // The scatter/gather all-gathers of received activations belong to the pipeline transfer.
  if (op.name.starts_with("pp_")) return CommClass::kPipeline;
  switch (op.group_kind) {
    case workload::GroupKind::kTensor:
      return CommClass::kTensor;
    case workload::GroupKind::kContext:
      return CommClass::kContext;
    case workload::GroupKind::kExpert:
      return CommClass::kExpert;
    case workload::GroupKind::kDataContext:
    case workload::GroupKind::kExpertDataContext:
    case workload::GroupKind::kEmbedding:
      break;
  }
  return CommClass::kData;
}

CollectiveOptions collective_options(const workload::Job& job) {
  const auto& t = job.params().training;
  CollectiveOptions o;
  if (t.dp_allreduce_algorithm == "auto" || t.dp_allreduce_algorithm.empty()) {
    o.dp_allreduce_auto = true;
  } else {
    const cluster::CollectiveAlgorithm* dp = cluster::find_dp_allreduce_algorithm(t.dp_allreduce_algorithm);
    if (dp == nullptr)  // the spec's validation refuses these first
      throw std::invalid_argument("training.dp_allreduce_algorithm: '" + t.dp_allreduce_algorithm + "'");
    o.dp_allreduce = dp->id;
  }
  if (t.dp_tree_chunk_bytes != 0) o.tree_chunk_bytes = t.dp_tree_chunk_bytes;
  o.sync_p2p = job.degrees().pp_sync;
  o.routing = &job.routing();
  o.hierarchical_all_to_all = job.params().parallelism.hierarchical_all_to_all;
  const std::string& protocol = t.nccl_protocol;
  o.nccl = protocol != "none";
  if (o.nccl && !protocol.empty() && protocol != "auto") {
    o.nccl_protocol = cluster::parse_protocol(protocol);
    if (!o.nccl_protocol)  // the spec's validation refuses these first
      throw std::invalid_argument("training.nccl_protocol: '" + protocol + "'");
  }
  // Reductions move at the rate of the GPU's memory-bound kernels (gpu-profiles.md: the HBM bandwidth times
  // the profile's `memory` efficiency, with the job's overrides and scales). A job over several GPU types
  // uses its reference profile (gpu_type) here: a simplification (docs/workload.md, mixed GPU generations).
  if (!t.free_reductions)
    o.reduce_bytes_per_s = job.compute().gpu().hbm_bytes_per_s * job.compute().params().memory_eff_max;
  return o;
}

std::uint32_t group_nodes(const workload::GroupDesc& group, std::uint32_t gpus_per_node) {
  const std::uint32_t n = group.size();
  if (gpus_per_node == 0 || n <= 1) return 1;
  if (const std::uint32_t local = rail_members_per_node(group, gpus_per_node); local > 1) return n / local;
  // The members' span of nodes, at most one node per member (the workload's groups ascend with their index:
  // the last member, or the inner progression's last, is the highest).
  const std::uint32_t high = std::max(group.member(n - 1), group.member(group.inner_size - 1));
  const std::uint32_t span = high / gpus_per_node - group.first / gpus_per_node + 1;
  return std::min(n, span);
}

std::optional<cluster::NcclCost> nccl_op_cost(const workload::Op& op, std::uint32_t rank,
                                              const CollectiveOptions& options) {
  if (!options.nccl) return std::nullopt;
  if (op.kind == OpKind::kSend || op.kind == OpKind::kRecv) {
    const std::uint32_t g = options.gpus_per_node;
    const std::uint32_t nodes = g != 0 && rank / g != op.peer / g ? 2 : 1;
    return cluster::nccl_cost(cluster::Collective::kAllToAll, cluster::Algorithm::kRing, op.comm_bytes,
                              cluster::nccl_shape(options.fabric, 2, nodes), options.nccl_protocol);
  }
  const std::uint32_t n = op.group.size();
  if (op.kind != OpKind::kCollective || n <= 1) return std::nullopt;
  const cluster::NcclShape shape =
      cluster::nccl_shape(options.fabric, n, group_nodes(op.group, options.gpus_per_node));
  const cluster::Algorithm algorithm =
      uses_tree(op, options) ? cluster::Algorithm::kTree : cluster::Algorithm::kRing;
  cluster::Collective c = cluster::Collective::kAllToAll;
  switch (op.collective) {
    case CollectiveKind::kAllReduce:
      c = cluster::Collective::kAllReduce;
      break;
    case CollectiveKind::kReduceScatter:
      c = cluster::Collective::kReduceScatter;
      break;
    case CollectiveKind::kAllGather:
      c = cluster::Collective::kAllGather;
      break;
    default:  // all-to-all, ring exchange: point-to-point
      break;
  }
  cluster::NcclCost cost = cluster::nccl_cost(c, algorithm, op.comm_bytes, shape, options.nccl_protocol);
  if (op.collective == CollectiveKind::kRingExchange) {  // n - 1 point-to-point exchanges, one after another
    cost.latency_us *= n - 1;
    cost.start_ps *= n - 1;
  }
  return cost;
}

std::uint32_t hierarchical_all_to_all_members(const workload::Op& op, const CollectiveOptions& options) {
  if (!options.hierarchical_all_to_all || op.kind != OpKind::kCollective ||
      op.collective != CollectiveKind::kAllToAll)
    return 1;
  return rail_members_per_node(op.group, options.gpus_per_node);
}

namespace {
// Bytes member `src` of an all-to-all sends member `dst` (group indices): comm_bytes / n when balanced; with
// skewed routing, dispatch sends each peer its share of the sender's pairs, combine returns the sender's
// share of each peer's pairs (moe_routing.hpp: every member routes in the same proportions).
double pair_bytes(const workload::Op& op, const CollectiveOptions& options, std::uint32_t src,
                  std::uint32_t dst) {
  const std::uint32_t n = op.group.size();
  const double b = static_cast<double>(op.comm_bytes);
  if (op.route == 0 || options.routing == nullptr || options.routing->balanced()) return b / n;
  const workload::RouteKey key{op.layer, op.step, op.microbatch, op.group.first};
  return b * options.routing->share(key, op.route == workload::kRouteCombine ? src : dst);
}

std::uint64_t message_bytes(double bytes) {
  return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(bytes)));
}
}  // namespace

bool uses_tree(const workload::Op& op, const CollectiveOptions& options) {
  const bool eligible = op.kind == OpKind::kCollective && op.collective == CollectiveKind::kAllReduce &&
                        (op.group_kind == workload::GroupKind::kDataContext ||
                         op.group_kind == workload::GroupKind::kExpertDataContext);
  if (!eligible) return false;
  if (!options.dp_allreduce_auto) return options.dp_allreduce == cluster::Algorithm::kTree;
  const std::uint32_t n = op.group.size();
  const std::uint32_t nodes = group_nodes(op.group, options.gpus_per_node);
  const std::uint32_t per_node = tree_members_per_node(op, options);
  // This runs for every GPU op of every such all-reduce: remember the last few answers (a step has a handful
  // of distinct bytes and group shapes). The key holds every input of the choice, so the memo is a pure
  // cache whatever job or fabric asks next on this thread.
  struct Memo {
    std::uint64_t bytes = 0;
    std::uint32_t n = 0, nodes = 0, per_node = 0;
    int protocol = -1;
    cluster::NcclFabric fabric;
    bool tree = false;
    bool used = false;
  };
  const int protocol = options.nccl_protocol ? static_cast<int>(*options.nccl_protocol) : -1;
  const cluster::NcclFabric& f = options.fabric;
  thread_local std::array<Memo, 8> memo{};
  thread_local std::size_t next = 0;
  for (const Memo& m : memo) {
    if (m.used && m.bytes == op.comm_bytes && m.n == n && m.nodes == nodes && m.per_node == per_node &&
        m.protocol == protocol && m.fabric == f)
      return m.tree;
  }
  const bool tree =
      cluster::auto_allreduce_algorithm(op.comm_bytes, cluster::nccl_shape(f, n, nodes),
                                        options.nccl_protocol, per_node) == cluster::Algorithm::kTree;
  memo[next] = Memo{op.comm_bytes, n, nodes, per_node, protocol, f, tree, true};
  next = (next + 1) % memo.size();
  return tree;
}

std::uint32_t tree_members_per_node(const workload::Op& op, const CollectiveOptions& options) {
  return rail_members_per_node(op.group, options.gpus_per_node);
}

std::uint64_t tree_chunk_bytes(const workload::Op& op, const CollectiveOptions& options) {
  if (options.tree_chunk_bytes != 0) return options.tree_chunk_bytes;
  // NCCL's tree chunk with Simple (enqueue.cc calcCollChunking: the buffer's step, 4 MiB / 8, chunkSteps 1)
  // on each of its channels. A chained tree runs a tree pair per channel; a flat tree over a group with
  // several members per node that are not one per rail (forced "tree") carries all channels' chunks at once.
  constexpr std::uint64_t kNcclTreeChunk = 512ull << 10;
  if (tree_members_per_node(op, options) > 1) return kNcclTreeChunk;
  const std::uint32_t n = op.group.size();
  const std::uint32_t nodes = group_nodes(op.group, options.gpus_per_node);
  return kNcclTreeChunk * std::max<std::uint32_t>(1, n / std::max<std::uint32_t>(1, nodes));
}

namespace {
// Ops before a collective's schedule: [Delay, Wait] when NCCL's latency is charged.
std::uint64_t nccl_prefix_ops(const workload::Op& op, const CollectiveOptions& options) {
  return options.nccl && op.kind == OpKind::kCollective && op.group.size() > 1 ? 2 : 0;
}
// Whether each ring step of `op` has a reduce slot (a Delay on its reduce steps, a Wait on the others).
bool has_reduce_slot(const workload::Op& op, const CollectiveOptions& options) {
  return options.reduce_bytes_per_s > 0 && op.kind == OpKind::kCollective && op.group.size() > 1 &&
         (op.collective == CollectiveKind::kAllReduce || op.collective == CollectiveKind::kReduceScatter) &&
         !uses_tree(op, options);
}
// `duration` on `sms - taken` of the GPU's `sms` SMs: sms / (sms - taken) times as long, rounded up.
SimTime on_fewer_sms(SimTime duration, std::uint64_t sms, std::uint64_t taken) {
  const std::uint64_t free = sms - taken;
  return (duration * sms + free - 1) / free;
}
}  // namespace

SimTime reduce_step_ps(const workload::Op& op, const CollectiveOptions& options) {
  if (!has_reduce_slot(op, options)) return 0;
  // Two reads (the received slice, the local one) and one write of the step's slice.
  const double bytes = 3.0 * static_cast<double>(share(op.comm_bytes, op.group.size()));
  return static_cast<SimTime>(std::ceil(bytes / options.reduce_bytes_per_s * 1e12));
}

std::uint64_t expanded_count(const workload::Op& op, std::uint32_t storage_targets, std::uint32_t disabled,
                             const CollectiveOptions& options) {
  if (op.kind != OpKind::kCompute && (disabled & bit(comm_class(op))) != 0) return 0;
  switch (op.kind) {
    case OpKind::kCompute:
      return 1;
    case OpKind::kSend:
      return options.sync_p2p ? 2 : 1;
    case OpKind::kRecv:
      return options.nccl ? 4 : 2;  // [Recv, Wait], then NCCL's latency: [Delay, Wait]
    case OpKind::kCollective: {
      const std::uint32_t n = op.group.size();
      if (n <= 1) return 0;
      const std::uint64_t pre = nccl_prefix_ops(op, options);
      if (uses_tree(op, options))
        return pre + tree_schedule(n, op.comm_bytes, tree_chunk_bytes(op, options),
                                   tree_members_per_node(op, options))
                         .padded_ops();
      if (op.collective == CollectiveKind::kAllToAll) {
        if (const std::uint32_t local = hierarchical_all_to_all_members(op, options); local > 1)
          return pre + 2ull * (local - 1) + 1 + 2ull * (n / local - 1) + 1;
        return pre + 2ull * (n - 1) + 1;
      }
      const std::uint64_t per_step =
          2ull * ring_channels(op, options) + 1 + (has_reduce_slot(op, options) ? 1 : 0);
      return pre + per_step * ring_steps(op.collective, n);
    }
    case OpKind::kCheckpointWrite:
      return storage_targets == 0 ? 0 : 2;
    case OpKind::kDataRead:
      return storage_targets == 0 ? 0 : 1;
  }
  return 0;
}

namespace {
// The op `sub` of `op`'s expansion without NCCL's latency ops and wire bytes (expand_unlabelled adds them).
GpuOp expand_schedule(const workload::Op& op, std::uint32_t rank, std::uint64_t sub,
                      const workload::ComputeModel& compute, std::uint32_t storage_targets,
                      const CollectiveOptions& options) {
  switch (op.kind) {
    case OpKind::kCompute:
      return GpuOp::compute(op.fixed_duration_ps != 0 ? op.fixed_duration_ps : compute.picoseconds(op),
                            op.flops, op.bytes);
    case OpKind::kSend:  // sub 1 (synchronous p2p only): wait until the send has left
      return sub == 0 ? GpuOp::send(op.peer, std::max<std::uint64_t>(1, op.comm_bytes), p2p_tag(op.tag))
                      : GpuOp::wait();
    case OpKind::kRecv:  // sub 2, 3 (NCCL's latency): expand_unlabelled
      return sub == 0 ? GpuOp::recv(op.peer, std::max<std::uint64_t>(1, op.comm_bytes), p2p_tag(op.tag))
                      : GpuOp::wait();
    case OpKind::kCollective: {
      const std::uint32_t n = op.group.size();
      const std::uint32_t r = op.group.index_of(rank);
      if (r >= n) throw std::logic_error("collective: rank " + std::to_string(rank) + " not in its group");
      if (uses_tree(op, options)) {
        const cluster::RankOp t =
            tree_schedule(n, op.comm_bytes, tree_chunk_bytes(op, options), tree_members_per_node(op, options))
                .op(r, sub);
        // The schedule's tags number (chunk, tree, phase); hashing them with the op keeps them apart from
        // every other collective's.
        const std::uint64_t bytes = std::max<std::uint64_t>(1, t.bytes);
        switch (t.kind) {
          case cluster::OpKind::kSend:
            return GpuOp::send(op.group.member(t.peer), bytes, collective_tag(op, t.tag));
          case cluster::OpKind::kRecv:
            return GpuOp::recv(op.group.member(t.peer), bytes, collective_tag(op, t.tag));
          default:
            return GpuOp::wait();
        }
      }
      if (op.collective == CollectiveKind::kAllToAll) {
        const bool skewed = op.route != 0 && options.routing != nullptr && !options.routing->balanced();
        if (const std::uint32_t L = hierarchical_all_to_all_members(op, options); L > 1) {
          // Member i sits on node i / L at local index i % L (rail_members_per_node). Phase 1 (NVLink): to
          // each local peer l', everything this GPU sends to local index l' on any node; phase 2 (the
          // rail): to the same local index on each other node, what this node's GPUs gathered for it.
          const std::uint32_t N = n / L, node = r / L, l = r % L;
          const auto at = [&](std::uint32_t b, std::uint32_t x) { return b * L + x; };
          const auto phase1 = [&](std::uint32_t b, std::uint32_t from, std::uint32_t to) {
            double sum = 0;
            for (std::uint32_t c = 0; c < N; ++c) sum += pair_bytes(op, options, at(b, from), at(c, to));
            return message_bytes(sum);
          };
          const auto phase2 = [&](std::uint32_t from, std::uint32_t to, std::uint32_t x) {
            double sum = 0;
            for (std::uint32_t y = 0; y < L; ++y) sum += pair_bytes(op, options, at(from, y), at(to, x));
            return message_bytes(sum);
          };
          const std::uint64_t p1 = 2ull * (L - 1) + 1;
          if (sub < L - 1) {
            const auto j = static_cast<std::uint32_t>(sub + 1);
            const std::uint32_t to = (l + j) % L;
            return GpuOp::send(op.group.member(at(node, to)), phase1(node, l, to),
                               collective_tag(op, (1ull << 40) | j));
          }
          if (sub < 2ull * (L - 1)) {
            const auto j = static_cast<std::uint32_t>(sub - (L - 1) + 1);
            const std::uint32_t from = (l + L - j) % L;
            return GpuOp::recv(op.group.member(at(node, from)), phase1(node, from, l),
                               collective_tag(op, (1ull << 40) | j));
          }
          if (sub < p1) return GpuOp::wait();
          const std::uint64_t q = sub - p1;
          if (q < N - 1) {
            const auto j = static_cast<std::uint32_t>(q + 1);
            const std::uint32_t to = (node + j) % N;
            return GpuOp::send(op.group.member(at(to, l)), phase2(node, to, l),
                               collective_tag(op, (2ull << 40) | j));
          }
          if (q < 2ull * (N - 1)) {
            const auto j = static_cast<std::uint32_t>(q - (N - 1) + 1);
            const std::uint32_t from = (node + N - j) % N;
            return GpuOp::recv(op.group.member(at(from, l)), phase2(from, node, l),
                               collective_tag(op, (2ull << 40) | j));
          }
          return GpuOp::wait();
        }
        if (sub < n - 1) {  // sends: member r + j
          const auto j = static_cast<std::uint32_t>(sub + 1);
          const std::uint32_t to = (r + j) % n;
          const std::uint64_t bytes =
              skewed ? message_bytes(pair_bytes(op, options, r, to)) : share(op.comm_bytes, n);
          return GpuOp::send(op.group.member(to), bytes, collective_tag(op, j));
        }
        if (sub < 2ull * (n - 1)) {  // receives: member r - j
          const auto j = static_cast<std::uint32_t>(sub - (n - 1) + 1);
          const std::uint32_t from = (r + n - j) % n;
          const std::uint64_t bytes =
              skewed ? message_bytes(pair_bytes(op, options, from, r)) : share(op.comm_bytes, n);
          return GpuOp::recv(op.group.member(from), bytes, collective_tag(op, j));
        }
        return GpuOp::wait();
      }
      if (const std::uint32_t local = ring_channels(op, options); local > 1) {
        // Rail-aligned rings, one channel per member on a node: per step, a Send to each channel's right
        // neighbour, a Recv from each channel's left one, then one Wait. Channel tags are apart from the
        // flat ring's (whose step number fits in 32 bits).
        const cluster::RailRings rings(n, local);
        const std::uint32_t channels = rings.channels();
        const bool reduce_slot = has_reduce_slot(op, options);
        const std::uint64_t per_step = 2ull * channels + 1 + (reduce_slot ? 1 : 0);
        const std::uint64_t step = sub / per_step, k = sub % per_step;
        const std::uint64_t bytes = share(share(op.comm_bytes, n), channels);
        const auto channel_tag = [&](std::uint64_t c) {
          return collective_tag(op, (step << 32) | (c << 24) | 1);
        };
        if (k < channels) {
          const auto c = static_cast<std::uint32_t>(k);
          return GpuOp::send(op.group.member(rings.right(c, r)), bytes, channel_tag(c));
        }
        if (k < 2ull * channels) {
          const auto c = static_cast<std::uint32_t>(k - channels);
          return GpuOp::recv(op.group.member(rings.left(c, r)), bytes, channel_tag(c));
        }
        if (reduce_slot && k == 2ull * channels && step + 1 < n)  // a reduce step: its reduction
          return GpuOp::delay(reduce_step_ps(op, options));
        return GpuOp::wait();
      }
      const bool reduce_slot = has_reduce_slot(op, options);
      const std::uint64_t per_step = reduce_slot ? 4 : 3;
      const std::uint64_t step = sub / per_step;
      const std::uint64_t bytes = op.collective == CollectiveKind::kRingExchange
                                      ? std::max<std::uint64_t>(1, op.comm_bytes)
                                      : share(op.comm_bytes, n);
      switch (sub % per_step) {
        case 0:
          return GpuOp::send(op.group.member((r + 1) % n), bytes, collective_tag(op, step));
        case 1:
          return GpuOp::recv(op.group.member((r + n - 1) % n), bytes, collective_tag(op, step));
        case 2:
          if (reduce_slot && step + 1 < n) return GpuOp::delay(reduce_step_ps(op, options));
          return GpuOp::wait();
        default:
          return GpuOp::wait();
      }
    }
    case OpKind::kCheckpointWrite:
      return sub == 0
                 ? GpuOp::storage(rank % storage_targets, std::max<std::uint64_t>(1, op.comm_bytes), true)
                 : GpuOp::wait();
    case OpKind::kDataRead:
      return GpuOp::storage(rank % storage_targets, std::max<std::uint64_t>(1, op.comm_bytes), false);
  }
  throw std::logic_error("expand: unknown op kind");
}

GpuOp expand_unlabelled(const workload::Op& op, std::uint32_t rank, std::uint64_t sub,
                        const workload::ComputeModel& compute, std::uint32_t storage_targets,
                        const CollectiveOptions& options) {
  const std::optional<cluster::NcclCost> cost = nccl_op_cost(op, rank, options);
  if (!cost) return expand_schedule(op, rank, sub, compute, storage_targets, options);
  // A Delay of zero would be a same-time self event: 1 ps stands in for it.
  const GpuOp latency = GpuOp::delay(std::max<SimTime>(1, cost->start_ps));
  if (op.kind == OpKind::kRecv && sub >= 2) return sub == 2 ? latency : GpuOp::wait();
  if (op.kind == OpKind::kCollective) {
    if (sub == 0) return latency;
    if (sub == 1) return GpuOp::wait();
    sub -= 2;
  }
  GpuOp g = expand_schedule(op, rank, sub, compute, storage_targets, options);
  if (cost->wire_factor != 1 && (g.kind == cluster::OpKind::kSend || g.kind == cluster::OpKind::kRecv))
    g.bytes = static_cast<std::uint64_t>(std::ceil(static_cast<double>(g.bytes) * cost->wire_factor));
  return g;
}
}  // namespace

GpuOp expand(const workload::Op& op, std::uint32_t rank, std::uint64_t sub,
             const workload::ComputeModel& compute, std::uint32_t storage_targets,
             const CollectiveOptions& options) {
  GpuOp g = expand_unlabelled(op, rank, sub, compute, storage_targets, options);
  if (g.kind == cluster::OpKind::kWait && op.kind != OpKind::kCompute)
    g.wait_label = wait_label(comm_class(op));
  return g;
}

namespace {
// The layer GEMMs Transformer Engine's userbuffers overlap (qkv, proj, fc1, fc2; forward and backward).
bool tp_overlap_gemm(const workload::Op& op) {
  if (op.kind != OpKind::kCompute || !op.gemm.valid()) return false;
  for (const std::string_view n : {"qkv_fwd", "qkv_bwd", "proj_fwd", "proj_bwd", "mlp_up_fwd", "mlp_up_bwd",
                                   "mlp_down_fwd", "mlp_down_bwd"})
    if (op.name == n) return true;
  return false;
}
bool tp_overlap_collective(const workload::Op& op, CollectiveKind kind) {
  return op.kind == OpKind::kCollective && op.group_kind == workload::GroupKind::kTensor &&
         op.collective == kind && !op.name.starts_with("pp_") && op.group.size() > 1;
}
// Context parallelism's KV ring (a ring exchange over the context group) and the fused attention next to it.
bool cp_ring(const workload::Op& op) {
  return op.kind == OpKind::kCollective && op.collective == CollectiveKind::kRingExchange &&
         op.group_kind == workload::GroupKind::kContext && op.group.size() > 1;
}
bool fused_attention(const workload::Op& op, std::string_view name) {
  return op.kind == OpKind::kCompute && op.name == name;
}
// ZeRO-3's per-layer parameter all-gather (dense or expert), forward or backward.
bool zero3_gather(const workload::Op& op) {
  return op.kind == OpKind::kCollective && op.collective == CollectiveKind::kAllGather &&
         (op.name == "zero3_param_allgather" || op.name == "zero3_expert_param_allgather");
}
constexpr std::uint64_t kNoReady = ~std::uint64_t{0};
// A parameter all-gather item's ready op: the end of the previous step on stream 0 (none for step 0).
constexpr std::uint64_t kStepBegin = kNoReady - 1;
}  // namespace

TrainingProgram::TrainingProgram(std::shared_ptr<const workload::Job> job, std::uint32_t steps,
                                 std::uint32_t storage_targets, std::uint32_t disabled,
                                 std::uint32_t gpus_per_node, const cluster::NcclFabric& fabric)
    : job_(std::move(job)), steps_(steps), storage_targets_(storage_targets), disabled_(disabled) {
  if (!job_) throw std::invalid_argument("TrainingProgram: null job");
  collectives_ = collective_options(*job_);
  collectives_.gpus_per_node = gpus_per_node;
  collectives_.fabric = fabric;
  userbuffers_ = collectives_;
  userbuffers_.nccl = false;
  const auto& training = job_->params().training;
  overlap_ = training.overlap_grad_reduce;
  tp_overlap_ = training.tp_comm_overlap && job_->degrees().sequence_parallel;
  param_overlap_ = training.overlap_param_gather && (job_->degrees().zero == 1 || job_->degrees().zero == 2);
  // TE's ring attention is a flash-attention kernel per KV block: an unfused attention keeps the whole
  // exchange before it.
  cp_overlap_ = training.cp_comm_overlap && job_->degrees().cp > 1 && job_->params().model.fused_attention;
  zero3_prefetch_ = training.zero3_prefetch && job_->degrees().zero == 3;
  tp_splits_ = std::max<std::uint32_t>(1, training.tp_comm_overlap_splits);
  tp_sms_ = training.tp_comm_overlap_sms;
  // The fewest SMs of the job's GPUs (node groups of several types: each GPU's own count applies below).
  sms_ = static_cast<std::uint32_t>(job_->gpu().sms);
  if (job_->mixed_gpus()) {
    sms_ = std::numeric_limits<std::uint32_t>::max();
    for (std::uint32_t s = 0; s < job_->degrees().pp; ++s) {
      for (const workload::ComputeModel* m : job_->stage_computes(s))
        sms_ = std::min(sms_, static_cast<std::uint32_t>(m->gpu().sms));
    }
  }
  if (tp_overlap_ && tp_sms_ >= sms_)
    throw std::invalid_argument("training.tp_comm_overlap_sms: " + std::to_string(tp_sms_) +
                                " is not below the GPU's " + std::to_string(sms_) + " SMs");
  // NCCL's channel limit for the communication stream's collectives: one ring per rail, as `warpsim
  // collective`.
  const std::uint32_t comm_max_channels = gpus_per_node;
  if (steps_ == 0) throw std::invalid_argument("TrainingProgram: steps must be >= 1");
  const std::uint32_t stages = job_->degrees().pp;
  stage_table_.resize(stages);
  for (std::uint32_t stage = 0; stage < stages; ++stage) {
    // Every GPU of a stage has the same op kinds and group sizes; rank (tp, cp, dp) = 0 stands for all.
    const workload::GpuProgram prog(job_, stage * job_->pipeline_stride(), 1);
    StageTable t;
    const std::uint64_t per_step = prog.ops_per_step();
    t.prefix.resize(per_step + 1);
    // overlap_grad_reduce: the step-end ops from `tail` on; the buckets' ready ops (workload indices).
    const std::uint64_t tail = job_->slot_offset(stage, job_->schedule().slots_per_stage());
    std::vector<std::uint64_t> ready;
    if (overlap_) ready = workload::grad_ready_ops(*job_, stage);
    std::size_t bucket = 0;
    // One communication stream (the frameworks have one per communicator): a TP piece queued behind a
    // gradient bucket would wait for its whole reduce. So TP collectives stay on stream 0, unoverlapped, from
    // the first bucket's ready op on (the last micro-batches' backward), and stream 1 never holds a TP piece
    // behind a bucket.
    const std::uint64_t tp_until = ready.empty() ? per_step : *std::min_element(ready.begin(), ready.end());
    // overlap_param_gather: each step-end all-gather bucket's consumer (the workload op it must precede),
    // and which consumers wait (those a non-empty bucket needs). TP overlap starts after the last of them.
    std::vector<std::uint64_t> needed;
    std::vector<std::uint64_t> wait_ops;
    if (param_overlap_) {
      needed = workload::param_needed_ops(job_, stage);
      std::size_t g = 0;
      for (std::uint64_t k = tail; k < per_step; ++k) {
        if (!workload::is_param_gather(job_->step_end_ops(stage)[k - tail])) continue;
        if (expanded_count(prog.op(k), storage_targets_, disabled_, collectives_) != 0)
          wait_ops.push_back(needed[g]);
        ++g;
      }
      std::sort(wait_ops.begin(), wait_ops.end());
      wait_ops.erase(std::unique(wait_ops.begin(), wait_ops.end()), wait_ops.end());
    }
    const std::uint64_t tp_after = wait_ops.empty() ? 0 : wait_ops.back() + 1;
    const auto tp_allowed = [&](std::uint64_t k) { return wait_ops.empty() || k > tp_after; };
    std::size_t gather = 0;
    // Stream 1's items before ordering, with what their ready op is: a workload op (gradient buckets; its
    // last expanded op), or a stream-0 position fixed below (TP pieces: `ready_at` = workload op, `sub`).
    struct Pending {
      CommBucket item;
      std::uint64_t ready_workload = kNoReady;     // gradient bucket
      std::uint64_t at_op = kNoReady, at_sub = 0;  // TP piece: expanded op `at_sub` of workload op `at_op`;
                                                   // at_sub == kNoReady: the last op before `at_op`
    };
    std::vector<Pending> pending;
    // Parameter all-gather items (stream 1's first), with the consumer each needs.
    std::vector<std::pair<Pending, std::uint64_t>> gathers;
    // Context parallelism's KV ring `op` (workload op `ring`, `ops` expanded ops) beside its fused attention
    // (`attention`, just before or after it): the ring moves to stream 1 after the op before the pair, the
    // attention runs as CP chunks, chunk 0 (the local KV block) at once, chunk j after ring step j-1, and the
    // ring's own place expands to nothing. Sets the pair's prefix entries.
    const auto overlap_cp_ring = [&](std::uint64_t ring, std::uint64_t attention, const workload::Op& op,
                                     std::uint64_t ops) {
      const std::uint32_t chunks = op.group.size();
      const auto lead = static_cast<std::uint32_t>(nccl_prefix_ops(op, collectives_));
      const std::uint64_t first = std::min(ring, attention);
      Pending p;
      p.item = {ring, 0, 0, ops};
      p.item.tp = p.item.cp = true;
      p.at_op = first;
      p.at_sub = kNoReady;
      const TpOverride gone{ring, TpOverride::kGatherGone, 1, 0, pending.size(), lead, CommClass::kContext};
      const TpOverride chunked{attention, TpOverride::kGemmAfterGather, chunks, 0, pending.size(),
                               lead,      CommClass::kContext};
      t.tp.push_back(ring < attention ? gone : chunked);  // t.tp stays sorted by workload op
      t.tp.push_back(ring < attention ? chunked : gone);
      pending.push_back(p);
      const auto expanded = [&](std::uint64_t k) { return k == ring ? 0 : 2ull * chunks - 1; };
      t.prefix[first + 1] = t.prefix[first] + expanded(first);
      t.prefix[first + 2] = t.prefix[first + 1] + expanded(first + 1);
    };
    for (std::uint64_t k = 0; k < per_step; ++k) {
      const workload::Op op = prog.op(k);
      std::uint64_t n = expanded_count(op, storage_targets_, disabled_, collectives_);
      if (param_overlap_ && std::binary_search(wait_ops.begin(), wait_ops.end(), k)) {
        t.param_waits.push_back({k, 0});  // item filled in below
        t.prefix[k + 1] = t.prefix[k] + n + 1;
        continue;
      }
      if (param_overlap_ && k >= tail && workload::is_param_gather(job_->step_end_ops(stage)[k - tail])) {
        if (n != 0) {
          Pending p;
          p.item = {k, kStepBegin, 0, n};
          gathers.emplace_back(p, needed[gather]);
        }
        ++gather;
        t.prefix[k + 1] = t.prefix[k];  // nothing on stream 0
        continue;
      }
      if (overlap_ && k >= tail && workload::is_grad_reduce(job_->step_end_ops(stage)[k - tail])) {
        if (n != 0) {
          Pending p;
          p.item = {k, 0, 0, n};
          p.ready_workload = ready[bucket];
          pending.push_back(p);
        }
        n = n != 0 ? 1 : 0;  // stream 0 keeps one WaitStream
        ++bucket;
      } else if (cp_overlap_ && n != 0 && cp_ring(op) && k + 1 < per_step && k + 1 < tp_until &&
                 tp_allowed(k) && fused_attention(prog.op(k + 1), "attn_fwd")) {
        // Forward (and recomputed forward): ring, then attention.
        overlap_cp_ring(k, k + 1, op, n);
        ++k;
        continue;
      } else if (cp_overlap_ && n != 0 && cp_ring(op) && k > 0 && k < tp_until && tp_allowed(k - 1) &&
                 fused_attention(prog.op(k - 1), "attn_bwd") &&
                 (t.tp.empty() || t.tp.back().workload_op != k - 1)) {
        // Backward: the attention's backward (k - 1, expanded as one op already: its prefix entry is redone),
        // then the ring's place.
        overlap_cp_ring(k, k - 1, op, n);
        continue;
      } else if (zero3_prefetch_ && n != 0 && zero3_gather(op) && k < tp_until && tp_allowed(k)) {
        // The gather moves to stream 1, issued once stream 0 has passed the same gather of the layer before
        // in this pass (same micro-batch, chunk and phase: one layer ahead, as FSDP's and DeepSpeed's
        // prefetch), or, for a pass's first layer, after the op before it; stream 0 waits for its end here.
        std::uint64_t prev = kNoReady;
        for (std::uint64_t q = k; q-- > 0;) {
          const workload::Op o = prog.op(q);
          const bool same_pass = o.microbatch == op.microbatch && o.chunk == op.chunk &&
                                 (o.phase == op.phase || o.phase == workload::Phase::kRecompute);
          if (!same_pass) break;
          if (o.name == op.name && zero3_gather(o)) {
            prev = q;
            break;
          }
        }
        Pending p;
        p.item = {k, 0, 0, n};
        if (prev != kNoReady && t.prefix[prev + 1] > t.prefix[prev]) {
          p.at_op = prev;
          p.at_sub = 0;
        } else {
          p.at_op = k;
          p.at_sub = kNoReady;
        }
        t.tp.push_back({k, TpOverride::kScatterWait, 1, 0, pending.size(), 0, CommClass::kData});
        pending.push_back(p);
        n = 1;
      } else if (tp_overlap_ && n != 0 && tp_overlap_collective(op, CollectiveKind::kAllGather) &&
                 k + 1 < per_step && k + 1 < tp_until && tp_allowed(k)) {
        const workload::Op gemm = prog.op(k + 1);
        const std::uint32_t chunks = op.group.size();
        if (tp_overlap_gemm(gemm) && ring_steps(op.collective, chunks) + 1 == chunks) {
          Pending p;
          p.item = {k, 0, 0, expanded_count(op, storage_targets_, disabled_, userbuffers_)};
          p.item.tp = true;
          p.at_op = k;
          p.at_sub = kNoReady;
          t.tp.push_back({k, TpOverride::kGatherGone, 1, 0, pending.size()});
          t.tp.push_back({k + 1, TpOverride::kGemmAfterGather, chunks, 0, pending.size()});
          pending.push_back(p);
          t.prefix[k + 1] = t.prefix[k];
          t.prefix[k + 2] = t.prefix[k + 1] + 2ull * chunks - 1;
          ++k;
          continue;
        }
      } else if (tp_overlap_ && n != 0 && tp_overlap_collective(op, CollectiveKind::kReduceScatter) &&
                 k > 0 && k < tp_until && tp_allowed(k - 1) && tp_overlap_gemm(prog.op(k - 1)) &&
                 (t.tp.empty() || t.tp.back().workload_op != k - 1)) {
        // The GEMM before it (k - 1) was expanded as one op: redo its prefix entry as chunks.
        const bool forward = op.phase == workload::Phase::kForward;
        const std::uint32_t chunks = forward ? tp_splits_ : 2;
        const std::uint32_t pieces = forward ? tp_splits_ : 1;
        t.tp.push_back({k - 1, TpOverride::kGemmBeforeScatter, chunks, forward ? 0u : 1u, 0});
        t.prefix[k] = t.prefix[k - 1] + chunks;
        const std::uint64_t piece_ops = expanded_count(op, storage_targets_, disabled_, userbuffers_);
        for (std::uint32_t j = 0; j < pieces; ++j) {
          Pending p;
          p.item = {k, 0, 0, piece_ops, pieces, j, true};
          p.at_op = k - 1;
          p.at_sub = j;  // forward: piece j after chunk j; backward: the one piece after chunk 0
          pending.push_back(p);
        }
        t.tp.push_back({k, TpOverride::kScatterWait, 1, 0, pending.size() - 1});
        n = 1;
      }
      t.prefix[k + 1] = t.prefix[k] + n;
    }
    // Each item's ready op as a stream-0 index within the step; then stream 1's order: by ready op (stable),
    // so a stream-0 WaitStream never waits for an item queued behind one whose ready op comes later.
    for (Pending& p : pending) {
      if (p.ready_workload != kNoReady) {
        // A bucket waits for the last expanded op of its ready workload op (or the last op before it,
        // where that expands to nothing).
        const std::uint64_t end = t.prefix[p.ready_workload + 1];
        if (end == 0) throw std::logic_error("TrainingProgram: a gradient bucket ready before any op");
        p.item.ready_op = end - 1;
      } else if (p.at_sub == kNoReady) {
        p.item.ready_op = t.prefix[p.at_op] == 0 ? kNoReady : t.prefix[p.at_op] - 1;
      } else {
        p.item.ready_op = t.prefix[p.at_op] + p.at_sub;
      }
    }
    // The gathers go first, in the order the forward needs them (stable: step-end order among equals).
    std::stable_sort(gathers.begin(), gathers.end(),
                     [](const auto& a, const auto& b) { return a.second < b.second; });
    const std::size_t gather_items = gathers.size();
    {
      std::vector<Pending> all;
      all.reserve(gathers.size() + pending.size());
      for (auto& g : gathers) all.push_back(g.first);
      for (TpOverride& o : t.tp) o.item += gather_items;
      all.insert(all.end(), pending.begin(), pending.end());
      pending = std::move(all);
    }
    std::vector<std::size_t> order(pending.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    // kNoReady (an all-gather first in its step) sorts last but must go first: it waits for nothing.
    const auto key = [&](std::size_t i) {
      const std::uint64_t r = pending[i].item.ready_op;
      return r == kNoReady || r == kStepBegin ? std::uint64_t{0} : r + 1;
    };
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
    std::vector<std::uint64_t> position(pending.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
      CommBucket item = pending[order[i]].item;
      item.offset = t.comm_per_step;
      t.comm_per_step += 1 + item.count;
      position[order[i]] = t.comm.size();
      t.comm.push_back(item);
    }
    for (TpOverride& o : t.tp) o.item = position[o.item];
    // Each waiting forward op waits for the last gather (in stream order) that it is the consumer of.
    for (ParamWait& w : t.param_waits) {
      std::uint64_t last = kNoReady;
      for (std::size_t g = 0; g < gather_items; ++g)
        if (gathers[g].second == w.workload_op) last = position[g];
      if (last == kNoReady)
        throw std::logic_error("TrainingProgram: a parameter wait without its all-gather");
      w.item = last;
    }
    // NCCL launches one CTA per channel (src/enqueue.cc); the channel count follows the bucket's size.
    if (comm_max_channels != 0) {
      for (const CommBucket& b : t.comm) {
        if (b.tp) continue;
        const workload::Op w = prog.op(b.workload_op);
        t.comm_ctas = std::max(t.comm_ctas,
                               cluster::nccl_channels(cluster::Algorithm::kRing, cluster::Protocol::kSimple,
                                                      w.group.size(), w.comm_bytes, comm_max_channels));
      }
    }
    workload::Op ckpt;
    ckpt.kind = OpKind::kCheckpointWrite;
    t.checkpoint_ops = expanded_count(ckpt, storage_targets_, disabled_);
    // Middle stages usually have identical tables: keep one copy.
    const auto same = std::find_if(tables_.begin(), tables_.end(), [&](const StageTable& o) {
      return o.prefix == t.prefix && o.checkpoint_ops == t.checkpoint_ops && o.comm == t.comm &&
             o.comm_per_step == t.comm_per_step && o.comm_ctas == t.comm_ctas && o.tp == t.tp &&
             o.param_waits == t.param_waits;
    });
    stage_table_[stage] = static_cast<std::uint32_t>(same - tables_.begin());
    if (same == tables_.end()) tables_.push_back(std::move(t));
  }
}

std::uint64_t TrainingProgram::step_start(const StageTable& t, std::uint32_t step) const {
  const auto every = job_->params().training.checkpoint_interval_steps;
  return std::uint64_t{step} * t.prefix.back() + (every ? step / every : 0) * t.checkpoint_ops;
}

std::uint64_t TrainingProgram::size(std::uint32_t gpu) const {
  if (gpu >= job_->world_size()) return 0;
  return step_start(table(job_->stage_of(gpu)), steps_);
}

std::optional<TrainingProgram::Source> TrainingProgram::source(std::uint32_t gpu, std::uint64_t index) const {
  if (gpu >= job_->world_size()) return std::nullopt;
  const StageTable& t = table(job_->stage_of(gpu));
  if (index >= step_start(t, steps_)) return std::nullopt;
  const std::uint64_t per_step = t.prefix.back();
  auto step = static_cast<std::uint32_t>(index / (per_step + t.checkpoint_ops));
  while (step + 1 < steps_ && step_start(t, step + 1) <= index) ++step;
  const std::uint64_t local = index - step_start(t, step);
  const std::uint64_t ops = t.prefix.size() - 1;
  const auto every = job_->params().training.checkpoint_interval_steps;
  const std::uint64_t workload_start = std::uint64_t{step} * ops + (every ? step / every : 0);
  if (local >= per_step) return Source{workload_start + ops, local - per_step};
  // The op whose expansion covers `local`: the last k with prefix[k] <= local (skips 0-op entries).
  const auto it = std::upper_bound(t.prefix.begin(), t.prefix.end(), local);
  const auto k = static_cast<std::uint64_t>(it - t.prefix.begin()) - 1;
  return Source{workload_start + k, local - t.prefix[k]};
}

std::optional<cluster::GpuOp> TrainingProgram::op(std::uint32_t gpu, std::uint64_t index) const {
  const auto src = source(gpu, index);
  if (!src) return std::nullopt;
  const workload::GpuProgram prog(job_, gpu, steps_);
  const workload::Op op = prog.op(src->workload_index);
  std::uint64_t sub = src->sub;
  if ((overlap_ && op.kind == OpKind::kCollective && op.phase == workload::Phase::kGradSync) ||
      ((tp_overlap_ || param_overlap_ || cp_overlap_ || zero3_prefetch_) && op.step < steps_)) {
    const StageTable& t = table(job_->stage_of(gpu));
    const std::uint64_t ops = t.prefix.size() - 1;
    const auto every = job_->params().training.checkpoint_interval_steps;
    const std::uint64_t step = op.step;
    const std::uint64_t step_begin = step * ops + (every ? step / every : 0);
    if (src->workload_index >= step_begin && src->workload_index < step_begin + ops) {
      const std::uint64_t k = src->workload_index - step_begin;
      if (param_overlap_ && !t.param_waits.empty() && k <= t.param_waits.back().workload_op) {
        const auto w =
            std::lower_bound(t.param_waits.begin(), t.param_waits.end(), k,
                             [](const ParamWait& x, std::uint64_t v) { return x.workload_op < v; });
        if (w != t.param_waits.end() && w->workload_op == k) {
          // Sub-op 0: wait for the end of the last parameter all-gather this op needs; then the op itself.
          if (sub == 0) {
            const CommBucket& item = t.comm[w->item];
            return GpuOp::wait_stream(step * t.comm_per_step + item.offset + item.count,
                                      wait_label(CommClass::kData));
          }
          --sub;
        }
      }
      if (tp_overlap_ || cp_overlap_ || zero3_prefetch_) {
        const auto o =
            std::lower_bound(t.tp.begin(), t.tp.end(), k,
                             [](const TpOverride& x, std::uint64_t v) { return x.workload_op < v; });
        if (o != t.tp.end() && o->workload_op == k) return tp_op(gpu, t, *o, op, step, sub);
      }
      if (overlap_ && op.kind == OpKind::kCollective && op.phase == workload::Phase::kGradSync) {
        const auto it = std::find_if(t.comm.begin(), t.comm.end(),
                                     [&](const CommBucket& b) { return !b.tp && b.workload_op == k; });
        // Stream 0 waits for the end of the bucket's reduce on stream 1.
        if (it != t.comm.end())
          return GpuOp::wait_stream(step * t.comm_per_step + it->offset + it->count,
                                    wait_label(comm_class(op)));
      }
    }
  }
  return expand(op, gpu, sub, job_->compute(gpu), storage_targets_, collectives_);
}

cluster::GpuOp TrainingProgram::tp_op(std::uint32_t gpu, const StageTable& t, const TpOverride& o,
                                      const workload::Op& op, std::uint64_t step, std::uint64_t sub) const {
  const std::uint8_t label = wait_label(o.cls);
  const CommBucket& item = t.comm[o.item];
  const std::uint64_t item_begin = step * t.comm_per_step + item.offset;  // its WaitStream
  // A chunk's share of the GEMM's time, so that the chunks add up to it exactly.
  const auto chunk = [&](std::uint32_t j, bool slowed) {
    const SimTime d = op.fixed_duration_ps != 0 ? op.fixed_duration_ps : job_->compute(gpu).picoseconds(op);
    SimTime c = d * (j + 1) / o.chunks - d * j / o.chunks;
    if (slowed) c = on_fewer_sms(c, gpu_sms(gpu), tp_sms_);  // TE's SM margin
    return GpuOp::compute(c, op.flops / o.chunks, op.bytes / o.chunks);
  };
  switch (o.kind) {
    case TpOverride::kGemmAfterGather: {
      // [chunk 0], then [WaitStream for ring step j-1's Wait, chunk j] for j >= 1.
      if (sub == 0) return chunk(0, false);
      const auto j = static_cast<std::uint32_t>((sub + 1) / 2);
      if (sub % 2 == 1) {
        const std::uint64_t per_ring_step = (item.count - o.lead) / (o.chunks - 1);
        return GpuOp::wait_stream(item_begin + o.lead + j * per_ring_step, label);
      }
      return chunk(j, false);
    }
    case TpOverride::kGemmBeforeScatter:
      return chunk(static_cast<std::uint32_t>(sub), sub >= o.slowed_from);
    case TpOverride::kScatterWait:
      return GpuOp::wait_stream(item_begin + item.count, label);
    case TpOverride::kGatherGone:
      break;
  }
  throw std::logic_error("TrainingProgram: a ring overlapped with its compute has no stream-0 op");
}

bool TrainingProgram::comm_contends(std::uint32_t gpu, std::uint64_t comm_pc) const {
  if ((!tp_overlap_ && !cp_overlap_) || gpu >= job_->world_size()) return true;
  const StageTable& t = table(job_->stage_of(gpu));
  if (t.comm_per_step == 0) return true;
  const std::uint64_t local = comm_pc % t.comm_per_step;
  const auto it =
      std::prev(std::upper_bound(t.comm.begin(), t.comm.end(), local,
                                 [](std::uint64_t x, const CommBucket& b) { return x < b.offset; }));
  return !it->tp;
}

SimTime TrainingProgram::contended_ps(std::uint32_t gpu, SimTime duration) const {
  if (gpu >= job_->world_size()) return duration;
  const std::uint32_t ctas = table(job_->stage_of(gpu)).comm_ctas;
  const std::uint32_t sms = gpu_sms(gpu);
  if (ctas == 0 || ctas >= sms) return duration;
  return on_fewer_sms(duration, sms, ctas);
}

std::optional<cluster::GpuOp> TrainingProgram::comm_op(std::uint32_t gpu, std::uint64_t index) const {
  if (!has_comm_stream() || gpu >= job_->world_size()) return std::nullopt;
  const StageTable& t = table(job_->stage_of(gpu));
  if (t.comm_per_step == 0) return std::nullopt;
  const std::uint64_t step = index / t.comm_per_step;
  if (step >= steps_) return std::nullopt;
  const std::uint64_t local = index % t.comm_per_step;
  // The item whose ops cover `local`: the last one starting at or before it.
  const auto it =
      std::prev(std::upper_bound(t.comm.begin(), t.comm.end(), local,
                                 [](std::uint64_t x, const CommBucket& b) { return x < b.offset; }));
  const std::uint64_t sub = local - it->offset;
  if (sub == 0) {
    if (it->ready_op == kNoReady) return GpuOp::wait();  // first in its step: nothing to wait for
    if (it->ready_op == kStepBegin) {  // a parameter all-gather: after the previous step on stream 0
      return step == 0 ? GpuOp::wait()
                       : GpuOp::wait_stream(step_start(t, static_cast<std::uint32_t>(step)) - 1);
    }
    return GpuOp::wait_stream(step_start(t, static_cast<std::uint32_t>(step)) + it->ready_op);
  }
  const std::uint64_t ops = t.prefix.size() - 1;
  const auto every = job_->params().training.checkpoint_interval_steps;
  const workload::GpuProgram prog(job_, gpu, steps_);
  workload::Op op = prog.op(step * ops + (every ? step / every : 0) + it->workload_op);
  if (it->pieces > 1) {
    op.comm_bytes = std::max<std::uint64_t>(1, op.comm_bytes / it->pieces);
    op.tag = it->piece;  // keeps the pieces' tags apart (collective_tag)
  }
  return expand(op, gpu, sub - 1, job_->compute(gpu), storage_targets_,
                it->tp && !it->cp ? userbuffers_ : collectives_);
}

}  // namespace warpsim::training
