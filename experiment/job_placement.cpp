// Placement policies of a shared cluster's jobs (see job_placement.hpp).
#include "experiment/job_placement.hpp"

#include <algorithm>
#include <stdexcept>

#include "models/cluster/fat_tree.hpp"

namespace warpsim::experiment {

namespace {

[[noreturn]] void fail(int index, const std::string& field, const std::string& message) {
  throw std::invalid_argument("experiment spec: jobs[" + std::to_string(index) + "]." + field + ": " +
                              message);
}

bool node_free(const std::vector<bool>& used, std::uint32_t node, std::uint32_t per_node) {
  for (std::uint32_t g = node * per_node; g < (node + 1) * per_node; ++g)
    if (used[g]) return false;
  return true;
}

// The free nodes of [first, last) in node order.
std::vector<std::uint32_t> free_nodes(const std::vector<bool>& used, std::uint32_t per_node,
                                      std::uint32_t first, std::uint32_t last) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t n = first; n < last; ++n)
    if (node_free(used, n, per_node)) out.push_back(n);
  return out;
}

// "packed": the first run of `need` consecutive free nodes.
std::vector<std::uint32_t> packed(const std::vector<bool>& used, const cluster::ClusterParams& p,
                                  std::uint32_t need) {
  std::uint32_t run = 0;
  for (std::uint32_t n = 0; n < p.nodes; ++n) {
    run = node_free(used, n, p.gpus_per_node) ? run + 1 : 0;
    if (run == need) {
      std::vector<std::uint32_t> out(need);
      for (std::uint32_t k = 0; k < need; ++k) out[k] = n + 1 - need + k;
      return out;
    }
  }
  return {};
}

// "topology": the first leaf group, else the first pod, with `need` free nodes; else the first free nodes
// in node order (which fills one leaf group after another).
std::vector<std::uint32_t> topology(const std::vector<bool>& used, const cluster::ClusterParams& p,
                                    std::uint32_t need) {
  for (const std::uint32_t domain : {nodes_per_leaf_group(p), nodes_per_pod(p)}) {
    for (std::uint32_t first = 0; first < p.nodes; first += domain) {
      auto nodes = free_nodes(used, p.gpus_per_node, first, std::min(p.nodes, first + domain));
      if (nodes.size() >= need) return {nodes.begin(), nodes.begin() + need};
    }
  }
  auto nodes = free_nodes(used, p.gpus_per_node, 0, p.nodes);
  if (nodes.size() < need) return {};
  return {nodes.begin(), nodes.begin() + need};
}

// "spread": whole nodes dealt round-robin over the leaf groups (the k-th free node of every group, then the
// (k+1)-th, ...), so consecutive ranks' nodes sit behind different leaves; on a torus, free nodes evenly
// spaced over the free ones.
std::vector<std::uint32_t> spread(const std::vector<bool>& used, const cluster::ClusterParams& p,
                                  std::uint32_t need) {
  const auto all = free_nodes(used, p.gpus_per_node, 0, p.nodes);
  if (all.size() < need) return {};
  std::vector<std::uint32_t> out;
  if (p.topology == cluster::TopologyKind::kTorus) {
    for (std::uint64_t k = 0; k < need; ++k) out.push_back(all[k * all.size() / need]);
    return out;
  }
  const std::uint32_t group = nodes_per_leaf_group(p);
  std::vector<std::vector<std::uint32_t>> groups((p.nodes + group - 1) / group);
  for (const std::uint32_t n : all) groups[n / group].push_back(n);
  for (std::size_t k = 0; out.size() < need; ++k) {
    for (const auto& g : groups) {
      if (k < g.size() && out.size() < need) out.push_back(g[k]);
    }
  }
  return out;
}

}  // namespace

std::uint32_t nodes_per_leaf_group(const cluster::ClusterParams& params) {
  if (params.topology != cluster::TopologyKind::kFatTree) return 1;
  return cluster::FatTree(params).down_ports();
}

std::uint32_t nodes_per_pod(const cluster::ClusterParams& params) {
  const std::uint32_t group = nodes_per_leaf_group(params);
  if (params.topology != cluster::TopologyKind::kFatTree || params.tiers != 3) return group;
  // A pod holds radix / 2 leaves, gpus_per_node (one per rail) for each node group.
  return group * std::max<std::uint32_t>(1, params.radix / 2 / params.gpus_per_node);
}

std::vector<std::uint32_t> place_job(const cluster::ClusterParams& params, const PlacementRequest& request,
                                     int index, std::vector<bool>& used) {
  const std::uint32_t per_node = params.gpus_per_node;
  if (request.policy == "explicit") {
    for (std::uint32_t r = 0; r < request.listed.size(); ++r) {
      const std::uint32_t g = request.listed[r];
      if (g >= used.size()) fail(index, "gpus", "GPU " + std::to_string(g) + " is beyond the cluster");
      if (used[g])
        fail(index, "gpus",
             "GPU " + std::to_string(g) + " (rank " + std::to_string(r) +
                 ") is already taken by an earlier job");
    }
    for (const std::uint32_t g : request.listed) used[g] = true;
    return request.listed;
  }
  const std::uint32_t need = (request.gpus + per_node - 1) / per_node;
  std::vector<std::uint32_t> nodes;
  if (request.policy == "packed") {
    nodes = packed(used, params, need);
  } else if (request.policy == "spread") {
    nodes = spread(used, params, need);
  } else if (request.policy == "topology") {
    nodes = topology(used, params, need);
  } else {
    fail(index, "placement", "must be packed, spread, topology or explicit (got '" + request.policy + "')");
  }
  if (nodes.empty()) {
    const auto free = free_nodes(used, per_node, 0, params.nodes).size();
    fail(index, "placement",
         request.policy + ": the job needs " + std::to_string(need) +
             (request.policy == "packed" ? " consecutive" : "") + " whole free nodes (" +
             std::to_string(request.gpus) + " GPUs) but " + std::to_string(free) + " of the cluster's " +
             std::to_string(params.nodes) + " nodes are free");
  }
  std::vector<std::uint32_t> gpus(request.gpus);
  for (std::uint32_t r = 0; r < request.gpus; ++r) gpus[r] = nodes[r / per_node] * per_node + r % per_node;
  for (const std::uint32_t n : nodes)
    for (std::uint32_t g = n * per_node; g < (n + 1) * per_node; ++g) used[g] = true;
  return gpus;
}

bool node_aligned(const std::vector<std::uint32_t>& gpus, std::uint32_t gpus_per_node) {
  if (gpus_per_node == 0) return false;
  for (std::size_t r = 0; r < gpus.size(); ++r) {
    if (gpus[r] % gpus_per_node != r % gpus_per_node) return false;
    const std::size_t first = r - r % gpus_per_node;
    if (gpus[r] / gpus_per_node != gpus[first] / gpus_per_node) return false;
  }
  return true;
}

}  // namespace warpsim::experiment
