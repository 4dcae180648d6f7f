// The training job's LP graph for the partitioners (see lp_graph.hpp).
#include "experiment/lp_graph.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "models/cluster/fat_tree.hpp"
#include "models/cluster/ring_order.hpp"
#include "models/training/training_program.hpp"
#include "models/workload/gpu_program.hpp"

namespace warpsim::training {

std::optional<Granularity> parse_granularity(std::string_view text) {
  if (text == "lp") return Granularity::kLp;
  if (text == "node") return Granularity::kNode;
  if (text == "group") return Granularity::kGroup;
  return std::nullopt;
}

Granularity auto_granularity(const cluster::ClusterParams& params, std::uint64_t max_vertices) {
  if (params.topology != cluster::TopologyKind::kFatTree) return Granularity::kNode;  // no LP graph anyway
  const cluster::FatTree topo(params);
  const std::uint64_t node_lps = std::uint64_t{params.nodes} * (topo.leaf_lp(0) / params.nodes);
  const std::uint64_t vertices = params.nodes + (topo.lp_count() - node_lps);
  return vertices <= max_vertices ? Granularity::kNode : Granularity::kGroup;
}

namespace {

using partition::kShared;
using partition::LpRange;

// One kind of message a GPU of a stage sends every step: to the member `delta` ring positions ahead in its
// group of `kind` (collectives), or to GPU rank + delta (pipeline point-to-point).
struct FlowClass {
  bool p2p = false;
  workload::GroupKind kind = workload::GroupKind::kTensor;
  std::int64_t delta = 0;
  // Rail-aligned ring channels (training_program.hpp): the members per node, and `delta` is the channel,
  // whose right neighbour depends on the member's node, so each GPU's peer is computed, not shifted.
  std::uint32_t rail_local = 0;
  CommClass cls = CommClass::kTensor;
  double messages = 0;
  double packets = 0;
  bool operator<(const FlowClass& o) const {
    return std::tie(p2p, kind, delta, rail_local) < std::tie(o.p2p, o.kind, o.delta, o.rail_local);
  }
};

struct StageProfile {
  std::vector<FlowClass> flows;
  double compute_ops = 0;
  double storage_requests = 0;  // checkpoint writes, to target rank mod targets
};

// The flows of the stage's first GPU stand for every GPU of the stage (the same ops, shifted).
StageProfile profile_stage(const std::shared_ptr<const workload::Job>& job, std::uint32_t stage,
                           std::uint32_t storage_targets, std::uint32_t packet_bytes,
                           std::uint32_t gpus_per_node, const cluster::NcclFabric& fabric) {
  const std::uint32_t rank = stage * job->pipeline_stride();
  const workload::GpuProgram prog(job, rank, 1);
  CollectiveOptions collectives = collective_options(*job);
  collectives.gpus_per_node = gpus_per_node;
  collectives.fabric = fabric;  // NCCL's protocol choice, as the training program makes it
  std::map<FlowClass, FlowClass> classes;
  StageProfile out;
  for (std::uint64_t i = 0; i < prog.size(); ++i) {
    const workload::Op op = prog.op(i);
    if (op.kind == workload::OpKind::kCompute) {
      out.compute_ops += 1;
      continue;
    }
    if (op.kind == workload::OpKind::kRecv) {      // its message is counted at its sender
      if (collectives.nccl) out.compute_ops += 1;  // NCCL's latency after it: a Delay, one GPU event
      continue;
    }
    if (op.kind == workload::OpKind::kCheckpointWrite || op.kind == workload::OpKind::kDataRead) {
      out.storage_requests += storage_targets == 0 ? 0 : 1;
      continue;
    }
    const std::uint64_t subs = expanded_count(op, storage_targets, 0, collectives);
    const std::uint32_t n = op.group.size();
    const std::uint32_t self = op.kind == workload::OpKind::kCollective ? op.group.index_of(rank) : 0;
    const std::uint32_t channels = ring_channels(op, collectives);
    std::uint64_t sends = 0;  // of this op so far: a rail ring's step posts channel c's Send c-th
    for (std::uint64_t sub = 0; sub < subs; ++sub) {
      const cluster::GpuOp g = expand(op, rank, sub, job->compute(rank), storage_targets, collectives);
      if (g.kind == cluster::OpKind::kDelay) out.compute_ops += 1;  // NCCL's latency, a reduction: one event
      if (g.kind != cluster::OpKind::kSend) continue;
      const std::uint64_t send_index = sends++;
      FlowClass key;
      key.cls = comm_class(op);
      if (op.kind == workload::OpKind::kSend) {
        key.p2p = true;
        key.delta = static_cast<std::int64_t>(g.peer) - static_cast<std::int64_t>(rank);
      } else if (channels > 1) {
        key.kind = op.group_kind;
        key.rail_local = channels;
        key.delta = static_cast<std::int64_t>(send_index % channels);  // the channel of this Send
      } else {
        key.kind = op.group_kind;
        key.delta = (static_cast<std::int64_t>(op.group.index_of(g.peer)) - self + n) % n;
      }
      FlowClass& c = classes.try_emplace(key, key).first->second;
      c.messages += 1;
      c.packets +=
          static_cast<double>((std::max<std::uint64_t>(g.bytes, 1) + packet_bytes - 1) / packet_bytes);
    }
  }
  for (const auto& [key, c] : classes) out.flows.push_back(c);
  return out;
}

// Builds vertices in hierarchy order and answers LP -> vertex through a per-unit table (a unit is a node or
// one LP outside the nodes), so no per-LP table exists unless the granularity is `lp`.
class Builder {
 public:
  Builder(const cluster::ClusterParams& p, Granularity gran, bool with_edges)
      : p_(p), topo_(p), gran_(gran), with_edges_(with_edges) {
    R_ = p.gpus_per_node;
    block_ = static_cast<std::uint32_t>(topo_.leaf_lp(0) / p.nodes);
    first_leaf_ = topo_.leaf_lp(0);
    up_ = topo_.up_ports();
    down_ = topo_.down_ports();
    groups_ = (p.nodes + down_ - 1) / down_;
    three_ = p.tiers == 3;
    pod_leaves_ = three_ ? p.radix / 2 : topo_.leaf_count();
    agg_up_ = three_ ? p.radix - p.radix / 2 : 0;
    pods_ = (topo_.leaf_count() + pod_leaves_ - 1) / pod_leaves_;
    first_tier1_ = topo_.tier1_lp(0);
    tier1_ = three_ ? pods_ * up_ : up_;
    first_core_ = first_tier1_ + tier1_;
    first_storage_ = topo_.storage_lp(0);
    g_.lp_count = topo_.lp_count();
    g_.granularity = gran == Granularity::kLp ? "lp" : gran == Granularity::kNode ? "node" : "group";
    g_.levels = 2;
    unit_vertex_.assign(p.nodes + (g_.lp_count - first_leaf_), 0);
    lay_out();
    weight_.assign(g_.vertex_count(), 0.0);
    // Every LP handles at least its init; keeps idle parts of the cluster from being weightless.
    for (std::uint32_t v = 0; v < g_.vertex_count(); ++v) {
      for (std::uint32_t i = g_.range_begin[v]; i < g_.range_begin[v + 1]; ++i)
        weight_[v] += g_.ranges[i].count;
    }
    leaf_up_.assign(topo_.leaf_count(), 0.0);
    leaf_down_.assign(topo_.leaf_count(), 0.0);
    pod_out_.assign(pods_, 0.0);
    pod_in_.assign(pods_, 0.0);
  }

  std::uint32_t vertex(LpId lp) const {
    if (lp < first_leaf_) {
      const std::uint32_t base = unit_vertex_[lp / block_];
      return gran_ == Granularity::kLp ? base + lp % block_ : base;
    }
    return unit_vertex_[p_.nodes + (lp - first_leaf_)];
  }

  // `events` events sent by LP a to LP b (a == b: self events).
  void add(LpId a, LpId b, double events) {
    if (events <= 0) return;
    const std::uint32_t va = vertex(a), vb = vertex(b);
    weight_[vb] += events;
    if (!with_edges_) return;
    if (va == vb) {
      g_.internal_weight += events;
      return;
    }
    edges_[std::uint64_t{std::min(va, vb)} << 32 | std::max(va, vb)] += events;
  }

  // A flow of `messages` messages / `packets` packets from GPU s to GPU d, hop by hop.
  void route(std::uint32_t s, std::uint32_t d, double messages, double packets) {
    const LpId gs = topo_.gpu_lp(s), gd = topo_.gpu_lp(d), ns = topo_.nic_lp(s), nd = topo_.nic_lp(d);
    add(gs, ns, messages);
    add(ns, ns, packets - messages);
    add(ns, gs, messages);
    add(nd, gd, messages);
    if (R_ > 1 && topo_.node_of(s) == topo_.node_of(d)) {
      const LpId nvs = topo_.nvswitch_lp(topo_.node_of(s));
      add(ns, nvs, packets);
      add(nvs, nd, packets);
      return;
    }
    const std::uint32_t ls = topo_.leaf_of_gpu(s), ld = topo_.leaf_of_gpu(d);
    add(ns, topo_.leaf_lp(ls), packets);
    add(topo_.leaf_lp(ld), nd, packets);
    if (ls == ld) return;
    leaf_up_[ls] += packets;
    leaf_down_[ld] += packets;
    if (three_ && ls / pod_leaves_ != ld / pod_leaves_) {
      pod_out_[ls / pod_leaves_] += packets;
      pod_in_[ld / pod_leaves_] += packets;
    }
  }

  void storage(std::uint32_t gpu, std::uint32_t target, double requests) {
    add(topo_.gpu_lp(gpu), topo_.storage_lp(target), requests);
    add(topo_.storage_lp(target), topo_.gpu_lp(gpu), requests);
  }
  void self(std::uint32_t gpu, double events) { add(topo_.gpu_lp(gpu), topo_.gpu_lp(gpu), events); }

  partition::PartitionGraph finish() {
    // Switch-to-switch traffic, spread evenly over the ECMP choices (the expectation of the hash).
    for (std::uint32_t l = 0; l < topo_.leaf_count(); ++l) {
      const std::uint32_t pod = l / pod_leaves_;
      for (std::uint32_t j = 0; j < up_; ++j) {
        const LpId t1 = three_ ? topo_.tier1_lp(pod * up_ + j) : topo_.tier1_lp(j);
        add(topo_.leaf_lp(l), t1, leaf_up_[l] / up_);
        add(t1, topo_.leaf_lp(l), leaf_down_[l] / up_);
      }
    }
    if (three_) {
      const double paths = static_cast<double>(up_) * agg_up_;
      for (std::uint32_t pod = 0; pod < pods_; ++pod) {
        for (std::uint32_t j = 0; j < up_; ++j) {
          for (std::uint32_t k = 0; k < agg_up_; ++k) {
            const LpId agg = topo_.tier1_lp(pod * up_ + j), core = topo_.core_lp(j * agg_up_ + k);
            add(agg, core, pod_out_[pod] / paths);
            add(core, agg, pod_in_[pod] / paths);
          }
        }
      }
    }
    g_.weight = std::move(weight_);
    if (with_edges_) {
      const std::uint32_t n = g_.vertex_count();
      std::vector<std::uint64_t> degree(n + 1, 0);
      for (const auto& [key, w] : edges_) {
        ++degree[key >> 32];
        ++degree[key & 0xffffffffu];
      }
      g_.edge_begin.assign(n + 1, 0);
      for (std::uint32_t v = 0; v < n; ++v) g_.edge_begin[v + 1] = g_.edge_begin[v] + degree[v];
      g_.edge_to.resize(g_.edge_begin[n]);
      g_.edge_weight.resize(g_.edge_begin[n]);
      std::vector<std::uint64_t> fill(g_.edge_begin.begin(), g_.edge_begin.end() - 1);
      std::vector<std::pair<std::uint64_t, double>> sorted(edges_.begin(), edges_.end());
      std::sort(sorted.begin(), sorted.end());  // deterministic CSR order (METIS's result depends on it)
      for (const auto& [key, w] : sorted) {
        const auto a = static_cast<std::uint32_t>(key >> 32),
                   b = static_cast<std::uint32_t>(key & 0xffffffffu);
        g_.edge_to[fill[a]] = b;
        g_.edge_weight[fill[a]++] = w;
        g_.edge_to[fill[b]] = a;
        g_.edge_weight[fill[b]++] = w;
      }
    }
    partition::validate(g_);
    return std::move(g_);
  }

 private:
  void vertex_for(std::vector<LpRange> ranges, std::uint32_t pod, std::uint32_t group,
                  const std::vector<std::uint64_t>& units) {
    for (std::uint64_t u : units) unit_vertex_[u] = g_.vertex_count();
    g_.add_vertex(ranges, 0.0, {pod, group});
  }
  // One vertex per LP of the ranges (lp granularity) or one for them all.
  void place(const std::vector<LpRange>& ranges, const std::vector<std::uint64_t>& units, std::uint32_t pod,
             std::uint32_t group, bool split) {
    if (!split) {
      vertex_for(ranges, pod, group, units);
      return;
    }
    for (std::uint64_t u : units) unit_vertex_[u] = g_.vertex_count();
    for (const LpRange& r : ranges) {
      for (std::uint32_t i = 0; i < r.count; ++i) g_.add_vertex({LpRange{r.first + i, 1}}, 0.0, {pod, group});
    }
  }
  std::uint64_t unit_of(LpId lp) const { return p_.nodes + (lp - first_leaf_); }

  void lay_out() {
    const bool lp = gran_ == Granularity::kLp;
    for (std::uint32_t pod = 0; pod < pods_; ++pod) {
      for (std::uint32_t grp = 0; grp < groups_; ++grp) {
        if (grp * R_ / pod_leaves_ != pod) continue;  // a group lives in the pod of its first leaf
        const std::uint32_t n0 = grp * down_, n1 = std::min(p_.nodes, n0 + down_);
        const LpRange leaves{topo_.leaf_lp(grp * R_), R_};
        std::vector<std::uint64_t> leaf_units;
        for (std::uint32_t r = 0; r < R_; ++r) leaf_units.push_back(unit_of(leaves.first + r));
        if (gran_ == Granularity::kGroup) {
          std::vector<std::uint64_t> units = leaf_units;
          for (std::uint32_t n = n0; n < n1; ++n) units.push_back(n);
          vertex_for({LpRange{n0 * block_, (n1 - n0) * block_}, leaves}, pod, grp, units);
          continue;
        }
        for (std::uint32_t n = n0; n < n1; ++n) place({LpRange{n * block_, block_}}, {n}, pod, grp, lp);
        for (std::uint32_t r = 0; r < R_; ++r)
          place({LpRange{leaves.first + r, 1}}, {leaf_units[r]}, pod, grp, false);
      }
      if (three_) {
        for (std::uint32_t j = 0; j < up_; ++j) {
          const LpId agg = topo_.tier1_lp(pod * up_ + j);
          place({LpRange{agg, 1}}, {unit_of(agg)}, pod, groups_ + pod, false);
        }
      }
    }
    // Shared: spines (2 tiers), cores, storage targets and whatever follows them.
    for (LpId id = three_ ? first_core_ : first_tier1_; id < g_.lp_count; ++id) {
      place({LpRange{id, 1}}, {unit_of(id)}, kShared, kShared, false);
    }
  }

  cluster::ClusterParams p_;
  cluster::FatTree topo_;
  Granularity gran_;
  bool with_edges_;
  std::uint32_t R_, block_, up_, down_, groups_, pod_leaves_, agg_up_, pods_, tier1_;
  bool three_;
  LpId first_leaf_, first_tier1_, first_core_, first_storage_;
  partition::PartitionGraph g_;
  std::vector<std::uint32_t> unit_vertex_;
  std::vector<double> weight_;
  std::unordered_map<std::uint64_t, double> edges_;
  std::vector<double> leaf_up_, leaf_down_, pod_out_, pod_in_;
};

double& summary_slot(TrafficSummary& s, CommClass c) {
  switch (c) {
    case CommClass::kTensor:
      return s.tensor;
    case CommClass::kContext:
      return s.context;
    case CommClass::kExpert:
      return s.expert;
    case CommClass::kPipeline:
      return s.pipeline;
    case CommClass::kCheckpoint:
      return s.checkpoint;
    default:
      return s.data;
  }
}

}  // namespace

partition::PartitionGraph build_lp_graph(const cluster::ClusterParams& params,
                                         const std::shared_ptr<const workload::Job>& job,
                                         std::uint32_t storage_targets, Granularity granularity,
                                         bool with_edges, TrafficSummary* summary) {
  // The graph's switch vertices and edges follow the fat-tree's wiring; a torus has no graph yet.
  if (params.topology != cluster::TopologyKind::kFatTree) {
    throw std::invalid_argument(
        "the LP graph (strategies topology, topology-striped, metis and the quality report) is built for "
        "fat_tree clusters only; use block or round-robin for a torus");
  }
  Builder b(params, granularity, with_edges);
  const std::uint32_t world = job->world_size();
  if (world > std::uint64_t{params.nodes} * params.gpus_per_node) {
    throw std::invalid_argument("lp graph: the job has more GPUs than the cluster");
  }
  std::vector<StageProfile> stages;
  for (std::uint32_t s = 0; s < job->degrees().pp; ++s) {
    stages.push_back(profile_stage(job, s, storage_targets, params.packet_bytes, params.gpus_per_node,
                                   cluster::nccl_fabric(params)));
  }
  TrafficSummary sum;
  for (std::uint32_t gpu = 0; gpu < world; ++gpu) {
    const StageProfile& st = stages[job->stage_of(gpu)];
    b.self(gpu, st.compute_ops);
    sum.compute += st.compute_ops;
    if (st.storage_requests > 0) {
      b.storage(gpu, gpu % storage_targets, st.storage_requests);
      sum.checkpoint += st.storage_requests;
    }
    for (const FlowClass& f : st.flows) {
      std::uint32_t peer = 0;
      if (f.p2p) {
        peer = static_cast<std::uint32_t>(static_cast<std::int64_t>(gpu) + f.delta);
      } else if (f.rail_local > 1) {
        const workload::GroupDesc grp = job->group(gpu, f.kind);
        const cluster::RailRings rings(grp.size(), f.rail_local);
        peer = grp.member(rings.right(static_cast<std::uint32_t>(f.delta), grp.index_of(gpu)));
      } else {
        const workload::GroupDesc grp = job->group(gpu, f.kind);
        peer = grp.member(static_cast<std::uint32_t>((grp.index_of(gpu) + f.delta) % grp.size()));
      }
      if (peer >= world || peer == gpu) continue;
      b.route(gpu, peer, f.messages, f.packets);
      summary_slot(sum, f.cls) += f.packets;
    }
  }
  if (summary) *summary = sum;
  return b.finish();
}

}  // namespace warpsim::training
