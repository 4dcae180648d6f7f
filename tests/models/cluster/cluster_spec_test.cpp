// ClusterSpec parsing (text format and JSON) and validation: bad specs fail with the field's name.
#include <gtest/gtest.h>

#include <string>

#include "experiment/spec/cluster_spec.hpp"

namespace warpsim::spec {
namespace {

const char* kGood = R"(
nodes: 4
scale_up { gpus_per_node: 4 nvlink_bandwidth_gbps: 3600 nvlink_latency_ns: 200 }
topology: "fat_tree"
fat_tree { tiers: 2 radix: 8 oversubscription: 1
  links { bandwidth_gbps: 400 latency_ns: 500 } links { bandwidth_gbps: 400 latency_ns: 500 } }
)";

// The message validation throws for `spec`, or "" when it is valid.
std::string error_of(const ClusterSpec& spec) {
  try {
    validated(spec);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

ClusterSpec good() {
  return parse_cluster_spec(kGood, "test");
}

TEST(ClusterSpec, TextAndJsonExamplesAgree) {
  const auto text =
      to_cluster_params(load_cluster_spec(WARPSIM_EXAMPLES_DIR "/fat_tree_2tier_16gpu.textproto"));
  const auto json = to_cluster_params(load_cluster_spec(WARPSIM_EXAMPLES_DIR "/fat_tree_2tier_16gpu.json"));
  EXPECT_EQ(text.nodes, 4u);
  EXPECT_EQ(text.gpus_per_node, 4u);
  EXPECT_EQ(json.nodes, text.nodes);
  EXPECT_EQ(json.radix, text.radix);
  EXPECT_EQ(json.links[1].latency_ps, text.links[1].latency_ps);
  EXPECT_DOUBLE_EQ(json.links[0].bandwidth_gbps, 400);
  EXPECT_EQ(text.packet_bytes, 4096u);
  EXPECT_EQ(text.links[0].latency_ps, 500'000u);
}

TEST(ClusterSpec, DefaultsFilled) {
  const auto p = to_cluster_params(good());
  EXPECT_EQ(p.packet_bytes, 4096u);
  EXPECT_EQ(p.injection_latency_ps, 100'000u);
  EXPECT_EQ(p.switch_buffer_bytes, 1u << 20);
  EXPECT_DOUBLE_EQ(p.oversubscription, 1.0);
}

TEST(ClusterSpec, UnknownFieldIsAParseError) {
  try {
    parse_cluster_spec("nodes: 4\nnode_count: 3\n", "t");
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("node_count"), std::string::npos) << e.what();
  }
  try {
    parse_cluster_spec(R"({"nodes": 4, "radixx": 3})", "t");
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("radixx"), std::string::npos) << e.what();
  }
}

TEST(ClusterSpec, ZeroBandwidthNamesTheField) {
  auto s = good();
  s.mutable_fat_tree()->mutable_links(1)->set_bandwidth_gbps(0);
  EXPECT_NE(error_of(s).find("fat_tree.links[1].bandwidth_gbps"), std::string::npos) << error_of(s);
  s = good();
  s.mutable_scale_up()->set_nvlink_bandwidth_gbps(0);
  EXPECT_NE(error_of(s).find("scale_up.nvlink_bandwidth_gbps"), std::string::npos) << error_of(s);
}

TEST(ClusterSpec, RadixTooSmallNamesTheField) {
  auto s = good();
  s.set_nodes(64);  // 16 node groups x 4 rails = 64 leaves > radix 8
  EXPECT_NE(error_of(s).find("fat_tree.radix"), std::string::npos) << error_of(s);
  EXPECT_NE(error_of(s).find("too small"), std::string::npos) << error_of(s);
  s.mutable_fat_tree()->set_tiers(3);
  s.mutable_fat_tree()->add_links()->set_bandwidth_gbps(400);
  s.mutable_fat_tree()->mutable_links(2)->set_latency_ns(500);
  s.set_nodes(4096);
  EXPECT_NE(error_of(s).find("fat_tree.radix"), std::string::npos) << error_of(s);
}

TEST(ClusterSpec, OtherBadFields) {
  auto s = good();
  s.set_topology("dragonfly");
  EXPECT_NE(error_of(s).find("topology: unknown topology 'dragonfly'"), std::string::npos) << error_of(s);
  s = good();
  s.set_nodes(0);
  EXPECT_NE(error_of(s).find("nodes"), std::string::npos);
  s = good();
  s.mutable_fat_tree()->set_tiers(4);
  EXPECT_NE(error_of(s).find("fat_tree.tiers"), std::string::npos);
  s = good();
  s.mutable_fat_tree()->set_oversubscription(2);  // 8 ports cannot split 2:1
  EXPECT_NE(error_of(s).find("fat_tree.oversubscription"), std::string::npos) << error_of(s);
  s = good();
  s.mutable_fat_tree()->mutable_links(0)->set_latency_ns(0);
  EXPECT_NE(error_of(s).find("fat_tree.links[0].latency_ns"), std::string::npos);
  s = good();
  s.mutable_network()->set_fidelity("fluid");
  EXPECT_NE(error_of(s).find("network.fidelity: unknown fidelity 'fluid'"), std::string::npos) << error_of(s);
  s = good();
  s.mutable_network()->set_fidelity("flow");
  EXPECT_EQ(error_of(s), "");
  EXPECT_EQ(to_cluster_params(s).fidelity, cluster::Fidelity::kFlow);
  s = good();
  s.mutable_network()->set_switching("wormhole");
  EXPECT_NE(error_of(s).find("network.switching"), std::string::npos) << error_of(s);
  s.mutable_network()->set_switching("cut_through");
  EXPECT_TRUE(to_cluster_params(s).cut_through);
  s = good();
  s.mutable_nic()->set_nics_per_gpu(2);
  EXPECT_NE(error_of(s).find("nic.nics_per_gpu"), std::string::npos);
  s = good();
  s.mutable_storage()->set_targets(2);
  EXPECT_NE(error_of(s).find("storage.bandwidth_gbps"), std::string::npos);
  s = good();
  s.mutable_fat_tree()->clear_links();
  EXPECT_NE(error_of(s).find("fat_tree.links"), std::string::npos);
  EXPECT_EQ(error_of(good()), "");
}

TEST(ClusterSpec, FidelityAndSwitchingExamplesLoad) {
  const auto flow =
      to_cluster_params(load_cluster_spec(WARPSIM_EXAMPLES_DIR "/fat_tree_2tier_16gpu_flow.textproto"));
  EXPECT_EQ(flow.fidelity, cluster::Fidelity::kFlow);
  EXPECT_FALSE(flow.cut_through);
  const auto ct = to_cluster_params(
      load_cluster_spec(WARPSIM_EXAMPLES_DIR "/fat_tree_3tier_16gpu_cut_through.textproto"));
  EXPECT_EQ(ct.fidelity, cluster::Fidelity::kPacket);
  EXPECT_TRUE(ct.cut_through);
  EXPECT_EQ(ct.tiers, 3u);
}

}  // namespace
}  // namespace warpsim::spec
