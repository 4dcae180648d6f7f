// Chakra traces as a cluster GPU program (see trace_program.hpp).
#include "models/training/trace_program.hpp"

#include <algorithm>
#include <stdexcept>
#include <tuple>

namespace warpsim::training {

namespace {

using workload::CollectiveKind;
using workload::chakra::Node;
using workload::chakra::NodeType;
using workload::chakra::Trace;

[[noreturn]] void fail(const Trace& t, const Node& n, const std::string& what) {
  throw std::invalid_argument("chakra trace " + t.source + ": byte " + std::to_string(n.offset) + ": node " +
                              std::to_string(n.id) + ": " + what);
}

// Chakra's CollectiveCommType -> the cluster's collective, or nullopt for a kind with no cluster algorithm.
std::optional<CollectiveKind> collective_kind(std::int64_t comm_type) {
  switch (comm_type) {
    case 0:
      return CollectiveKind::kAllReduce;
    case 2:
      return CollectiveKind::kAllGather;
    case 6:
      return CollectiveKind::kAllToAll;
    case 7:  // REDUCE_SCATTER
    case 8:  // REDUCE_SCATTER_BLOCK
      return CollectiveKind::kReduceScatter;
    default:  // REDUCE, GATHER, SCATTER, BROADCAST, BARRIER
      return std::nullopt;
  }
}

std::uint64_t bytes_of(const Trace& t, const Node& n) {
  if (!n.comm_size) fail(t, n, std::string(to_string(n.type)) + " without a comm_size attribute");
  if (*n.comm_size < 0) fail(t, n, "negative comm_size " + std::to_string(*n.comm_size));
  return static_cast<std::uint64_t>(*n.comm_size);
}

std::uint32_t peer_of(const Trace& t, const Node& n, const std::optional<std::int64_t>& attr,
                      const char* name, std::uint32_t rank, std::uint32_t ranks) {
  if (!attr) fail(t, n, std::string(to_string(n.type)) + " without a " + name + " attribute");
  if (*attr < 0 || *attr >= ranks || *attr == rank) {
    fail(t, n,
         std::string(name) + " " + std::to_string(*attr) + " is not another rank of the " +
             std::to_string(ranks) + " traces");
  }
  return static_cast<std::uint32_t>(*attr);
}

}  // namespace

TraceCounts& TraceCounts::operator+=(const TraceCounts& o) {
  nodes += o.nodes;
  compute += o.compute;
  compute_modeled += o.compute_modeled;
  collectives += o.collectives;
  sends += o.sends;
  recvs += o.recvs;
  skipped_cpu += o.skipped_cpu;
  skipped_other += o.skipped_other;
  skipped_empty += o.skipped_empty;
  skipped_collectives += o.skipped_collectives;
  skipped_p2p += o.skipped_p2p;
  recorded_compute_ps += o.recorded_compute_ps;
  dangling_ctrl_deps += o.dangling_ctrl_deps;
  ctrl_deps_ignored += o.ctrl_deps_ignored;
  return *this;
}

TraceProgram::TraceProgram(const std::vector<Trace>& traces, const TraceProgramOptions& options,
                           std::shared_ptr<const workload::ComputeModel> compute)
    : compute_(std::move(compute)), collectives_(options.collectives) {
  if (!compute_) throw std::invalid_argument("TraceProgram: null compute model");
  if (traces.empty()) throw std::invalid_argument("chakra trace: no trace files");
  const auto ranks = static_cast<std::uint32_t>(traces.size());
  // Trace sends are complete once the message has left (a node that depends on a send waits for it).
  collectives_.sync_p2p = true;

  rank_to_gpu_ = options.rank_to_gpu;
  if (rank_to_gpu_.empty()) {
    for (std::uint32_t r = 0; r < ranks; ++r) rank_to_gpu_.push_back(r);
  }
  if (rank_to_gpu_.size() != ranks) {
    throw std::invalid_argument("rank_to_gpu: " + std::to_string(rank_to_gpu_.size()) + " entries for " +
                                std::to_string(ranks) + " trace ranks");
  }
  for (std::uint32_t r = 0; r < ranks; ++r) {
    const std::uint32_t g = rank_to_gpu_[r];
    if (options.cluster_gpus != 0 && g >= options.cluster_gpus) {
      throw std::invalid_argument("rank_to_gpu: rank " + std::to_string(r) + " -> GPU " + std::to_string(g) +
                                  ", but the cluster has " + std::to_string(options.cluster_gpus) + " GPUs");
    }
    if (!gpu_to_rank_.emplace(g, r).second) {
      throw std::invalid_argument("rank_to_gpu: GPU " + std::to_string(g) + " is given to ranks " +
                                  std::to_string(gpu_to_rank_[g]) + " and " + std::to_string(r));
    }
  }

  // Named groups first, then the world group on demand; identical member lists share one index.
  std::map<std::vector<std::uint32_t>, std::uint32_t> group_index;
  auto intern = [&](std::vector<std::uint32_t> members) {
    const auto [it, added] = group_index.emplace(members, static_cast<std::uint32_t>(groups_.size()));
    if (added) groups_.push_back(std::move(members));
    return it->second;
  };
  std::map<std::string, std::uint32_t> named;
  for (const auto& [name, members] : options.process_groups) {
    for (const auto m : members) {
      if (m >= ranks) {
        throw std::invalid_argument("process_group " + name + ": rank " + std::to_string(m) + " but only " +
                                    std::to_string(ranks) + " trace files");
      }
    }
    named[name] = intern(members);
  }
  std::vector<std::uint32_t> everyone(ranks);
  for (std::uint32_t r = 0; r < ranks; ++r) everyone[r] = r;
  const std::uint32_t world = intern(everyone);

  // What each rank issues, to check the ranks against each other before simulating (a mismatch would
  // otherwise show up as GPUs blocked forever).
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<CollectiveKind>> issued;  // (group, rank)
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint64_t>, std::int64_t> p2p;    // (src, dst, tag)

  rank_ops_.resize(ranks);
  for (std::uint32_t r = 0; r < ranks; ++r) {
    const Trace& t = traces[r];
    RankOps& out = rank_ops_[r];
    std::map<std::uint32_t, std::uint32_t> sequence;  // per group: collectives issued so far
    out.counts.dangling_ctrl_deps = t.dangling_ctrl_deps;
    out.counts.ctrl_deps_ignored = t.ctrl_deps_ignored ? 1 : 0;
    for (const std::size_t i : t.execution_order()) {
      const Node& n = t.nodes[i];
      ++out.counts.nodes;
      if (n.is_cpu_op.value_or(false)) {
        ++out.counts.skipped_cpu;
        continue;
      }
      Mapped m;
      workload::Op& op = m.op;
      switch (n.type) {
        case NodeType::kComp: {
          op.kind = workload::OpKind::kCompute;
          op.name = "chakra_comp";
          if (n.duration_micros != 0) {
            op.fixed_duration_ps = n.duration_micros * 1'000'000ull;
          } else if (n.num_ops.value_or(0) > 0 || n.tensor_size.value_or(0) > 0) {
            op.flops = static_cast<double>(std::max<std::int64_t>(0, n.num_ops.value_or(0)));
            op.bytes = static_cast<double>(std::max<std::int64_t>(0, n.tensor_size.value_or(0)));
            op.fixed_duration_ps = compute_->picoseconds(op);
            ++out.counts.compute_modeled;
          }
          if (op.fixed_duration_ps == 0) {
            ++out.counts.skipped_empty;
            continue;
          }
          ++out.counts.compute;
          out.counts.recorded_compute_ps += op.fixed_duration_ps;
          break;
        }
        case NodeType::kCommColl: {
          const auto kind = collective_kind(n.comm_type.value_or(0));
          if (!kind) {
            ++out.counts.skipped_collectives;
            continue;
          }
          const auto pg = named.find(n.pg_name);
          m.group = pg != named.end() ? pg->second : world;
          const auto& members = groups_[m.group];
          const auto at = std::find(members.begin(), members.end(), r);
          if (at == members.end())
            fail(t, n, "rank " + std::to_string(r) + " is not a member of process group " + n.pg_name);
          m.position = static_cast<std::uint32_t>(at - members.begin());
          op.kind = workload::OpKind::kCollective;
          op.name = "chakra_coll";
          op.collective = *kind;
          op.comm_bytes = bytes_of(t, n);
          // The data-parallel class: the spec's all-reduce algorithm applies, and waits count as collective.
          op.group_kind = workload::GroupKind::kDataContext;
          op.group = workload::GroupDesc{0, 1, static_cast<std::uint32_t>(members.size()), 0, 1};
          // Every member issues a group's collectives in the same order (as NCCL requires), so the n-th one
          // gets the same tag everywhere; the group number keeps two groups' n-th apart.
          op.step = sequence[m.group]++ * 7919u + m.group;
          issued[{m.group, r}].push_back(*kind);
          ++out.counts.collectives;
          break;
        }
        case NodeType::kCommSend:
        case NodeType::kCommRecv: {
          const bool send = n.type == NodeType::kCommSend;
          if (!(send ? n.comm_dst : n.comm_src)) {  // no peer to match it with
            ++out.counts.skipped_p2p;
            continue;
          }
          const std::uint32_t peer = send ? peer_of(t, n, n.comm_dst, "comm_dst", r, ranks)
                                          : peer_of(t, n, n.comm_src, "comm_src", r, ranks);
          op.kind = send ? workload::OpKind::kSend : workload::OpKind::kRecv;
          op.name = "chakra_p2p";
          op.peer = rank_to_gpu_[peer];
          op.comm_bytes = bytes_of(t, n);
          op.tag = static_cast<std::uint64_t>(n.comm_tag.value_or(0));
          p2p[{send ? r : peer, send ? peer : r, op.tag}] += send ? 1 : -1;
          ++(send ? out.counts.sends : out.counts.recvs);
          break;
        }
        default:  // metadata, memory and invalid nodes carry no simulated work
          ++out.counts.skipped_other;
          continue;
      }
      out.ops.push_back(m);
    }
    out.prefix.resize(out.ops.size() + 1);
    for (std::size_t k = 0; k < out.ops.size(); ++k)
      out.prefix[k + 1] = out.prefix[k] + expanded_count(out.ops[k].op, 0, 0, collectives_);
  }

  for (std::uint32_t g = 0; g < groups_.size(); ++g) {
    const auto& members = groups_[g];
    const auto& first = issued[{g, members[0]}];
    for (const auto m : members) {
      const auto& mine = issued[{g, m}];
      if (mine == first) continue;
      const Trace& t = traces[m];
      throw std::invalid_argument(
          "chakra trace " + t.source + ": rank " + std::to_string(m) + " issues " +
          std::to_string(mine.size()) + " collectives on a group of " + std::to_string(members.size()) +
          " ranks where rank " + std::to_string(members[0]) + " issues " + std::to_string(first.size()) +
          (mine.size() == first.size() ? " of other kinds" : "") + " (the traces do not belong together)");
    }
  }
  for (const auto& [key, balance] : p2p) {
    if (balance == 0) continue;
    const auto [src, dst, tag] = key;
    throw std::invalid_argument(
        "chakra trace " + traces[balance > 0 ? dst : src].source + ": rank " + std::to_string(src) +
        " sends " + (balance > 0 ? std::to_string(balance) + " more" : std::to_string(-balance) + " fewer") +
        " messages with tag " + std::to_string(tag) + " to rank " + std::to_string(dst) +
        " than that rank receives");
  }
}

std::optional<std::uint32_t> TraceProgram::rank_of(std::uint32_t gpu) const {
  const auto it = gpu_to_rank_.find(gpu);
  if (it == gpu_to_rank_.end()) return std::nullopt;
  return it->second;
}

std::uint64_t TraceProgram::size(std::uint32_t gpu) const {
  const auto r = rank_of(gpu);
  return r ? rank_ops_[*r].prefix.back() : 0;
}

TraceCounts TraceProgram::total_counts() const {
  TraceCounts total;
  for (const auto& r : rank_ops_) total += r.counts;
  return total;
}

std::optional<cluster::GpuOp> TraceProgram::op(std::uint32_t gpu, std::uint64_t index) const {
  const auto r = rank_of(gpu);
  if (!r) return std::nullopt;
  const RankOps& ro = rank_ops_[*r];
  if (index >= ro.prefix.back()) return std::nullopt;
  // The op whose expansion covers `index`: the last k with prefix[k] <= index (skips 0-op entries).
  const auto it = std::upper_bound(ro.prefix.begin(), ro.prefix.end(), index);
  const auto k = static_cast<std::size_t>(it - ro.prefix.begin()) - 1;
  const Mapped& m = ro.ops[k];
  const bool collective = m.op.kind == workload::OpKind::kCollective;
  cluster::GpuOp g =
      expand(m.op, collective ? m.position : gpu, index - ro.prefix[k], *compute_, 0, collectives_);
  // A collective's expansion names group positions; the cluster wants GPUs.
  if (collective && (g.kind == cluster::OpKind::kSend || g.kind == cluster::OpKind::kRecv))
    g.peer = rank_to_gpu_[groups_[m.group][g.peer]];
  return g;
}

}  // namespace warpsim::training
