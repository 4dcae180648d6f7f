// ClusterSpec loading, defaults and validation (see cluster_spec.hpp).
#include "experiment/spec/cluster_spec.hpp"
#include "experiment/spec/spec_text.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "experiment/fidelity.hpp"

namespace warpsim::spec {

namespace {

[[noreturn]] void fail(const std::string& field, const std::string& message) {
  throw std::invalid_argument("cluster spec: " + field + ": " + message);
}

void check_bandwidth(double gbps, const std::string& field) {
  if (!(gbps > 0) || !std::isfinite(gbps)) fail(field, "must be > 0 (got " + std::to_string(gbps) + ")");
}
void check_latency(std::uint64_t ns, const std::string& field) {
  // A zero latency would give the conservative mode no lookahead.
  if (ns == 0) fail(field, "must be > 0");
  if (ns > 1'000'000'000'000ull) fail(field, "is larger than 1000 s");
}

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) {
  return (a + b - 1) / b;
}

// Checks the fat-tree section; returns the number of leaf switches (for the LP id budget).
std::uint64_t validate_fat_tree(ClusterSpec& spec) {
  const auto& up = spec.scale_up();
  const auto& ft = spec.fat_tree();
  if (ft.tiers() != 2 && ft.tiers() != 3)
    fail("fat_tree.tiers", "must be 2 or 3 (got " + std::to_string(ft.tiers()) + ")");
  if (static_cast<std::uint32_t>(ft.links_size()) != ft.tiers()) {
    fail("fat_tree.links", "needs one entry per tier (" + std::to_string(ft.tiers()) + "), got " +
                               std::to_string(ft.links_size()));
  }
  for (int i = 0; i < ft.links_size(); ++i) {
    const std::string field = "fat_tree.links[" + std::to_string(i) + "]";
    check_bandwidth(ft.links(i).bandwidth_gbps(), field + ".bandwidth_gbps");
    check_latency(ft.links(i).latency_ns(), field + ".latency_ns");
  }
  if (ft.radix() < 2) fail("fat_tree.radix", "must be >= 2 (got " + std::to_string(ft.radix()) + ")");
  if (ft.radix() > 65536) fail("fat_tree.radix", "must be <= 65536");
  const double o = ft.oversubscription() == 0 ? 1.0 : ft.oversubscription();
  spec.mutable_fat_tree()->set_oversubscription(o);
  if (!(o >= 1) || !std::isfinite(o)) fail("fat_tree.oversubscription", "must be >= 1");
  const double up_ports = ft.radix() / (1.0 + o);
  const auto u = static_cast<std::uint64_t>(std::llround(up_ports));
  if (std::abs(up_ports - static_cast<double>(u)) > 1e-9 || u == 0 || u >= ft.radix()) {
    fail("fat_tree.oversubscription", "radix " + std::to_string(ft.radix()) + " cannot be split " +
                                          std::to_string(o) + ":1 into whole down and up ports");
  }
  const std::uint64_t d = ft.radix() - u;
  const std::uint64_t gpus = std::uint64_t{spec.nodes()} * up.gpus_per_node();
  const std::uint64_t leaves = ceil_div(spec.nodes(), d) * up.gpus_per_node();
  if (ft.tiers() == 2) {
    if (leaves > ft.radix()) {
      fail("fat_tree.radix",
           std::to_string(ft.radix()) + " is too small for " + std::to_string(gpus) +
               " GPUs in 2 tiers (needs " + std::to_string(leaves) + " spine ports; at most " +
               std::to_string(d * (ft.radix() / up.gpus_per_node()) * up.gpus_per_node()) + " GPUs)");
    }
  } else {
    if (ft.radix() % 2 != 0) fail("fat_tree.radix", "must be even for 3 tiers");
    const std::uint64_t pods = ceil_div(leaves, ft.radix() / 2);
    if (pods > ft.radix()) {
      fail("fat_tree.radix", std::to_string(ft.radix()) + " is too small for " + std::to_string(gpus) +
                                 " GPUs in 3 tiers (needs " + std::to_string(pods) + " core ports)");
    }
  }
  return leaves;
}

void validate_torus(const ClusterSpec& spec) {
  const auto& t = spec.torus();
  if (t.dims_size() < 1 || t.dims_size() > 3)
    fail("torus.dims", "needs 1 to 3 dimensions (got " + std::to_string(t.dims_size()) + ")");
  std::uint64_t product = 1;
  for (int i = 0; i < t.dims_size(); ++i) {
    if (t.dims(i) < 2)
      fail("torus.dims[" + std::to_string(i) + "]", "must be >= 2 (got " + std::to_string(t.dims(i)) + ")");
    product *= t.dims(i);
  }
  if (product != spec.nodes()) {
    fail("torus.dims",
         "product " + std::to_string(product) + " must equal nodes (" + std::to_string(spec.nodes()) + ")");
  }
  if (t.links_size() != 2)
    fail("torus.links",
         "needs 2 entries (NIC <-> router, router <-> router), got " + std::to_string(t.links_size()));
  for (int i = 0; i < t.links_size(); ++i) {
    const std::string field = "torus.links[" + std::to_string(i) + "]";
    check_bandwidth(t.links(i).bandwidth_gbps(), field + ".bandwidth_gbps");
    check_latency(t.links(i).latency_ns(), field + ".latency_ns");
  }
}

// Node groups tile [0, nodes) in order, without gaps or overlaps; the GPU type names are the workload
// model's to check (it owns the profiles).
void validate_node_groups(const ClusterSpec& spec) {
  std::uint64_t next = 0;
  for (int i = 0; i < spec.node_group_size(); ++i) {
    const NodeGroupSpec& g = spec.node_group(i);
    const std::string field = "node_group[" + std::to_string(i) + "]";
    if (g.gpu_type().empty()) fail(field + ".gpu_type", "must be set (e.g. \"H100-SXM\")");
    if (g.nodes() == 0) fail(field + ".nodes", "must be >= 1");
    const std::uint64_t first = g.has_first_node() ? g.first_node() : next;
    if (first < next) {
      fail(field + ".first_node", std::to_string(first) + " overlaps the previous group (nodes up to " +
                                      std::to_string(next - 1) + "); list groups in node order");
    }
    if (first > next) {
      fail(field + ".first_node", std::to_string(first) + " leaves nodes " + std::to_string(next) + ".." +
                                      std::to_string(first - 1) + " in no group");
    }
    next = first + g.nodes();
    if (next > spec.nodes()) {
      fail(field + ".nodes", "the group ends at node " + std::to_string(next - 1) + " but the cluster has " +
                                 std::to_string(spec.nodes()) + " nodes");
    }
  }
  if (spec.node_group_size() > 0 && next != spec.nodes()) {
    fail("node_group", "the groups cover nodes 0.." + std::to_string(next - 1) + " of " +
                           std::to_string(spec.nodes()) + "; every node needs a group");
  }
}

}  // namespace

std::vector<workload::RankGpuRange> rank_gpu_types(const ClusterSpec& spec, std::uint64_t world) {
  std::vector<workload::RankGpuRange> out;
  const std::uint64_t per_node = spec.scale_up().gpus_per_node();
  std::uint64_t node = 0;
  for (int i = 0; i < spec.node_group_size(); ++i) {
    const NodeGroupSpec& g = spec.node_group(i);
    if (g.has_first_node()) node = g.first_node();
    // Job rank r runs on cluster GPU r: the group's GPUs are ranks [node * per_node, ...) below the world
    // size.
    const std::uint64_t begin = node * per_node, end = std::min(world, (node + g.nodes()) * per_node);
    node += g.nodes();
    if (begin >= end) continue;
    out.push_back({static_cast<std::uint32_t>(begin), static_cast<std::uint32_t>(end - begin), g.gpu_type(),
                   "cluster.node_group[" + std::to_string(i) + "]"});
  }
  return out;
}

ClusterSpec parse_cluster_spec(std::string_view text, std::string_view origin) {
  ClusterSpec spec;
  parse_text_or_json(text, spec, "cluster spec", origin);
  return spec;
}

ClusterSpec load_cluster_spec(const std::string& path) {
  return parse_cluster_spec(read_spec_file(path, "cluster spec"), path);
}

ClusterSpec validated(ClusterSpec spec) {
  if (spec.nodes() == 0) fail("nodes", "must be >= 1");
  const auto& up = spec.scale_up();
  if (up.gpus_per_node() == 0) fail("scale_up.gpus_per_node", "must be >= 1");
  if (up.gpus_per_node() > 1) {
    check_bandwidth(up.nvlink_bandwidth_gbps(), "scale_up.nvlink_bandwidth_gbps");
    check_latency(up.nvlink_latency_ns(), "scale_up.nvlink_latency_ns");
  }
  if (spec.topology().empty()) fail("topology", "is required (known: fat_tree, torus)");
  if (spec.topology() != "fat_tree" && spec.topology() != "torus")
    fail("topology", "unknown topology '" + spec.topology() + "' (known: fat_tree, torus)");

  auto& nic = *spec.mutable_nic();
  if (nic.nics_per_gpu() == 0) nic.set_nics_per_gpu(1);
  if (nic.nics_per_gpu() != 1)
    fail("nic.nics_per_gpu",
         "only 1 NIC per GPU is supported (got " + std::to_string(nic.nics_per_gpu()) + ")");
  if (nic.injection_latency_ns() == 0) nic.set_injection_latency_ns(100);
  check_latency(nic.injection_latency_ns(), "nic.injection_latency_ns");

  auto& net = *spec.mutable_network();
  if (const auto error = experiment::fidelity_error(net.fidelity())) fail("network.fidelity", *error);
  if (net.fidelity().empty()) net.set_fidelity("packet");
  if (net.switching().empty()) net.set_switching("store_and_forward");
  if (net.switching() != "store_and_forward" && net.switching() != "cut_through") {
    fail("network.switching",
         "unknown switching '" + net.switching() + "' (known: store_and_forward, cut_through)");
  }
  if (net.packet_bytes() == 0) net.set_packet_bytes(4096);
  if (net.packet_bytes() > (1u << 30)) fail("network.packet_bytes", "must be <= 1 GiB");
  if (net.switch_buffer_bytes() == 0) net.set_switch_buffer_bytes(1 << 20);
  if (net.switch_latency_ns() == 0) net.set_switch_latency_ns(100);
  check_latency(net.switch_latency_ns(), "network.switch_latency_ns");

  const std::uint64_t gpus = std::uint64_t{spec.nodes()} * up.gpus_per_node();
  std::uint64_t switches = spec.nodes();
  if (spec.topology() == "fat_tree") {
    switches = validate_fat_tree(spec);
  } else {
    validate_torus(spec);
    if (net.fidelity() == "flow") {
      // The flow network keeps a fixed-size path per flow: NIC -> router, router hops, router -> NIC.
      std::uint64_t diameter = 0;
      for (const std::uint32_t k : spec.torus().dims()) diameter += k / 2;
      if (diameter + 2 > cluster::kMaxFlowPathLinks) {
        fail("torus.dims", "flow fidelity supports paths of at most " +
                               std::to_string(cluster::kMaxFlowPathLinks) + " links; this torus needs " +
                               std::to_string(diameter + 2) + " (use packet fidelity or more dimensions)");
      }
    }
  }
  if (gpus * 4 + switches * 4 + spec.storage().targets() > 4'000'000'000ull)
    fail("nodes", "too many LPs for 32-bit ids");

  validate_node_groups(spec);

  const auto& st = spec.storage();
  if (st.targets() > 0) {
    check_bandwidth(st.bandwidth_gbps(), "storage.bandwidth_gbps");
    check_bandwidth(st.per_client_bandwidth_gbps(), "storage.per_client_bandwidth_gbps");
    check_latency(st.request_latency_ns(), "storage.request_latency_ns");
  }
  return spec;
}

cluster::ClusterParams to_cluster_params(const ClusterSpec& raw) {
  const ClusterSpec spec = validated(raw);
  cluster::ClusterParams p;
  p.nodes = spec.nodes();
  p.gpus_per_node = spec.scale_up().gpus_per_node();
  if (p.gpus_per_node > 1) {
    p.nvlink = {spec.scale_up().nvlink_bandwidth_gbps(), spec.scale_up().nvlink_latency_ns() * kPicosPerNano};
  }
  if (spec.topology() == "torus") {
    p.topology = cluster::TopologyKind::kTorus;
    for (int i = 0; i < spec.torus().dims_size(); ++i) p.torus_dims[i] = spec.torus().dims(i);
    for (int i = 0; i < spec.torus().links_size(); ++i) {
      p.links[i] = {spec.torus().links(i).bandwidth_gbps(),
                    spec.torus().links(i).latency_ns() * kPicosPerNano};
    }
  } else {
    p.tiers = spec.fat_tree().tiers();
    p.radix = spec.fat_tree().radix();
    p.oversubscription = spec.fat_tree().oversubscription();
    for (int i = 0; i < spec.fat_tree().links_size(); ++i) {
      p.links[i] = {spec.fat_tree().links(i).bandwidth_gbps(),
                    spec.fat_tree().links(i).latency_ns() * kPicosPerNano};
    }
  }
  p.injection_latency_ps = spec.nic().injection_latency_ns() * kPicosPerNano;
  p.fidelity = experiment::parse_fidelity(spec.network().fidelity()).value_or(cluster::Fidelity::kPacket);
  p.cut_through = spec.network().switching() == "cut_through";
  p.packet_bytes = static_cast<std::uint32_t>(spec.network().packet_bytes());
  p.switch_buffer_bytes = spec.network().switch_buffer_bytes();
  p.switch_latency_ps = spec.network().switch_latency_ns() * kPicosPerNano;
  p.storage_targets = spec.storage().targets();
  if (p.storage_targets > 0) {
    p.storage_bandwidth_gbps = spec.storage().bandwidth_gbps();
    p.storage_client_gbps = spec.storage().per_client_bandwidth_gbps();
    p.storage_latency_ps = spec.storage().request_latency_ns() * kPicosPerNano;
  }
  return p;
}

}  // namespace warpsim::spec
