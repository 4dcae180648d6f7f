// ExperimentSpec loading: the shipped test spec loads with defaults filled; JSON is accepted; bad fields
// raise std::invalid_argument naming the field; cluster/job consistency is checked.
#include <gtest/gtest.h>

#include <google/protobuf/util/json_util.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "experiment/spec/cluster_spec.hpp"
#include "experiment/spec/experiment_spec.hpp"

namespace warpsim::spec {
namespace {

const std::string kSmall = std::string(WARPSIM_TRAINING_TEST_DIR) + "/small.textproto";

std::string error_of(ExperimentSpec spec) {
  try {
    validated(std::move(spec));
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(ExperimentSpec, LoadsTextAndFillsDefaults) {
  const ExperimentSpec s = load_experiment_spec(kSmall);
  EXPECT_EQ(s.name(), "small");
  EXPECT_EQ(s.simulation().steps(), 2u);
  EXPECT_EQ(s.simulation().fidelity(), "packet");
  EXPECT_DOUBLE_EQ(s.simulation().end_time_s(), 1e6);
  EXPECT_EQ(s.job().parallelism().tensor_parallel(), 2u);
  EXPECT_EQ(s.cluster().nodes(), 4u);
}

TEST(ExperimentSpec, JsonRoundTripAndFileReferences) {
  const ExperimentSpec s = load_experiment_spec(kSmall);
  std::string json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(s, &json).ok());
  const auto dir = std::filesystem::temp_directory_path() / "warpsim_experiment_spec_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "exp.json") << json;
  const ExperimentSpec j = load_experiment_spec((dir / "exp.json").string());
  EXPECT_EQ(j.SerializeAsString(), s.SerializeAsString());
  // cluster_file / job_file are resolved relative to the experiment file.
  std::string cluster_json, job_json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(s.cluster(), &cluster_json).ok());
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(s.job(), &job_json).ok());
  std::ofstream(dir / "cluster.json") << cluster_json;
  std::ofstream(dir / "job.json") << job_json;
  std::ofstream(dir / "exp2.textproto") << "name: \"small\"\ncluster_file: \"cluster.json\"\n"
                                           "job_file: \"job.json\"\nsimulation { steps: 2 }\n";
  const ExperimentSpec f = load_experiment_spec((dir / "exp2.textproto").string());
  EXPECT_EQ(f.cluster().SerializeAsString(), s.cluster().SerializeAsString());
  EXPECT_EQ(f.job().SerializeAsString(), s.job().SerializeAsString());
  std::filesystem::remove_all(dir);
}

// Node groups (issue #26 item 2): text format and JSON give the same spec; explicit first_node or counts in
// order; each job rank gets its node's GPU type (rank r on GPU r, 4 GPUs per node).
TEST(ExperimentSpec, NodeGroupsInTextAndJson) {
  const std::string mixed = std::string(WARPSIM_TRAINING_TEST_DIR) + "/small_mixed_gpus.textproto";
  const ExperimentSpec s = load_experiment_spec(mixed);
  ASSERT_EQ(s.cluster().node_group_size(), 2);
  EXPECT_EQ(s.cluster().node_group(1).gpu_type(), "A100-80GB");
  std::string json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(s, &json).ok());
  EXPECT_NE(json.find("nodeGroup"), std::string::npos) << json;
  const auto dir = std::filesystem::temp_directory_path() / "warpsim_experiment_spec_node_groups";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "exp.json") << json;
  EXPECT_EQ(load_experiment_spec((dir / "exp.json").string()).SerializeAsString(), s.SerializeAsString());
  std::filesystem::remove_all(dir);

  const auto ranges = rank_gpu_types(s.cluster(), 16);
  ASSERT_EQ(ranges.size(), 2u);
  EXPECT_EQ(ranges[0].first_rank, 0u);
  EXPECT_EQ(ranges[0].ranks, 8u);
  EXPECT_EQ(ranges[0].gpu_type, "H100-SXM");
  EXPECT_EQ(ranges[1].first_rank, 8u);
  EXPECT_EQ(ranges[1].ranks, 8u);
  EXPECT_EQ(ranges[1].origin, "cluster.node_group[1]");
  // A job on fewer GPUs than the cluster covers only its ranks: here only the first group's.
  EXPECT_EQ(rank_gpu_types(s.cluster(), 6).size(), 1u);
  EXPECT_EQ(rank_gpu_types(s.cluster(), 6)[0].ranks, 6u);

  ExperimentSpec explicit_first = s;
  explicit_first.mutable_cluster()->mutable_node_group(1)->set_first_node(2);
  EXPECT_EQ(error_of(explicit_first), "");
  ExperimentSpec gap = s;
  gap.mutable_cluster()->mutable_node_group(1)->set_first_node(3);
  EXPECT_NE(error_of(gap).find("node_group[1].first_node"), std::string::npos) << error_of(gap);
  ExperimentSpec overlap = s;
  overlap.mutable_cluster()->mutable_node_group(1)->set_first_node(1);
  EXPECT_NE(error_of(overlap).find("node_group[1].first_node"), std::string::npos) << error_of(overlap);
  ExperimentSpec too_many = s;
  too_many.mutable_cluster()->mutable_node_group(1)->set_nodes(3);
  EXPECT_NE(error_of(too_many).find("node_group[1].nodes"), std::string::npos) << error_of(too_many);
  ExperimentSpec no_type = s;
  no_type.mutable_cluster()->mutable_node_group(0)->clear_gpu_type();
  EXPECT_NE(error_of(no_type).find("node_group[0].gpu_type"), std::string::npos) << error_of(no_type);
}

TEST(ExperimentSpec, ErrorsNameTheField) {
  const ExperimentSpec good = load_experiment_spec(kSmall);
  {
    ExperimentSpec s = good;
    s.mutable_job()->mutable_parallelism()->set_data_parallel(8);  // 32 GPUs on a 16-GPU cluster
    s.mutable_job()->set_world_size_gpus(0);
    EXPECT_NE(error_of(s).find("job.world_size_gpus"), std::string::npos) << error_of(s);
  }
  {
    ExperimentSpec s = good;
    s.mutable_simulation()->set_sync("eventually");
    EXPECT_NE(error_of(s).find("simulation.sync"), std::string::npos) << error_of(s);
  }
  {
    ExperimentSpec s = good;
    s.mutable_simulation()->set_fidelity("fluid");
    EXPECT_NE(error_of(s).find("simulation.fidelity"), std::string::npos) << error_of(s);
    s.mutable_simulation()->set_fidelity("flow");  // a cluster without network.fidelity takes it
    s.mutable_cluster()->mutable_network()->clear_fidelity();
    EXPECT_EQ(error_of(s), "");
    EXPECT_EQ(validated(s).cluster().network().fidelity(), "flow");
  }
  {
    ExperimentSpec s = good;
    s.mutable_simulation()->set_end_time_s(-1);
    EXPECT_NE(error_of(s).find("simulation.end_time_s"), std::string::npos) << error_of(s);
  }
  {
    ExperimentSpec s = good;
    s.mutable_cluster()->mutable_scale_up()->set_gpus_per_node(0);
    EXPECT_NE(error_of(s).find("cluster"), std::string::npos) << error_of(s);
    EXPECT_NE(error_of(s).find("gpus_per_node"), std::string::npos) << error_of(s);
  }
  {
    ExperimentSpec s = good;
    s.clear_job();
    EXPECT_NE(error_of(s).find("job"), std::string::npos) << error_of(s);
  }
  {
    ExperimentSpec s = good;
    s.set_cluster_gpu_type("A100-80GB");  // the job asks for H100-SXM
    EXPECT_NE(error_of(s).find("job.gpu_type"), std::string::npos) << error_of(s);
    s.set_cluster_gpu_type("H100-SXM");
    EXPECT_EQ(error_of(s), "");
  }
  EXPECT_THROW(parse_experiment_spec("simulation { steps: -1 }", "inline"), std::invalid_argument);
  EXPECT_THROW(parse_experiment_spec("{\"nope\": 1}", "inline"), std::invalid_argument);
}

}  // namespace
}  // namespace warpsim::spec
