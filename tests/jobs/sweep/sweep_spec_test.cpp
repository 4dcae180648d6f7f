// SweepSpec expansion: product and zip order, stable ids, canonical values, and the errors that name the
// offending path (unknown field, empty axis, type mismatch, zipped lengths, repeated-field indexes).
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>

#include "experiment/spec/experiment_spec.hpp"
#include "experiment/spec/sweep_spec.hpp"

namespace warpsim::spec {
namespace {

ExperimentSpec base() {
  return load_experiment_spec(std::string(WARPSIM_TEST_DATA_DIR) + "/small64.textproto");
}

Sweep expand(const std::string& text) {
  return expand_sweep(parse_sweep_spec(text, "<test>"), base());
}

std::string error_of(const std::string& text) {
  try {
    expand(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SweepSpec, ProductAndZipExpandInOrder) {
  const Sweep s = expand(R"(
    name: "t"
    axes { path: "cluster.fat_tree.links.0.bandwidth_gbps" values: ["200", "400"] }
    zip {
      axes { path: "job.parallelism.pipeline_parallel" values: ["1", "2", "4"] }
      axes { path: "job.parallelism.data_parallel" values: ["8", "4", "2"] }
    })");
  ASSERT_EQ(s.experiments.size(), 6u);
  EXPECT_EQ(s.experiments[0].name, "t-0");
  EXPECT_EQ(s.experiments[0].spec.name(), "t-0");
  // The first axis varies slowest; a zip sets its fields together.
  EXPECT_EQ(s.experiments[1].overrides_text(),
            "cluster.fat_tree.links.0.bandwidth_gbps=200; job.parallelism.pipeline_parallel=2; "
            "job.parallelism.data_parallel=4");
  EXPECT_DOUBLE_EQ(s.experiments[4].spec.cluster().fat_tree().links(0).bandwidth_gbps(), 400);
  EXPECT_EQ(s.experiments[4].spec.job().parallelism().pipeline_parallel(), 2u);
  EXPECT_EQ(s.experiments[4].spec.job().parallelism().data_parallel(), 4u);
  // links.1 was not swept.
  EXPECT_DOUBLE_EQ(s.experiments[4].spec.cluster().fat_tree().links(1).bandwidth_gbps(), 400);
  std::set<std::string> ids;
  for (const auto& e : s.experiments) ids.insert(e.id);
  EXPECT_EQ(ids.size(), 6u);
}

TEST(SweepSpec, IdsDependOnOverridesNotPosition) {
  const Sweep a = expand(R"(axes { path: "simulation.seed" values: ["1", "2"] })");
  const Sweep b = expand(R"(axes { path: "simulation.seed" values: ["0", "02", "1"] })");
  ASSERT_EQ(a.experiments.size(), 2u);
  ASSERT_EQ(b.experiments.size(), 3u);
  EXPECT_EQ(a.experiments[0].id, b.experiments[2].id);  // seed=1 at index 0 and at index 2
  EXPECT_EQ(a.experiments[1].id, b.experiments[1].id);  // "02" is canonically 2
  EXPECT_EQ(b.experiments[1].overrides[0].value, "2");
  EXPECT_EQ(a.experiments[0].id.size(), 12u);
  // Same text, same ids, every time.
  EXPECT_EQ(expand(R"(axes { path: "simulation.seed" values: ["1", "2"] })").experiments[1].id,
            a.experiments[1].id);
}

TEST(SweepSpec, EnumsBoolsAndStrings) {
  const Sweep s = expand(R"(
    axes { path: "job.model.dtype" values: ["BF16", "FP8"] }
    axes { path: "job.training.activation_recompute" values: ["false", "true"] }
    axes { path: "simulation.sync" values: ["sequential"] })");
  ASSERT_EQ(s.experiments.size(), 4u);
  EXPECT_EQ(s.experiments[3].spec.job().model().dtype(), JobModel::FP8);
  EXPECT_TRUE(s.experiments[3].spec.job().training().activation_recompute());
  EXPECT_EQ(s.experiments[3].spec.simulation().sync(), "sequential");
}

TEST(SweepSpec, JsonSpecsWork) {
  const Sweep s = expand(R"({"name": "j", "axes": [{"path": "simulation.seed", "values": ["3", "4"]}]})");
  ASSERT_EQ(s.experiments.size(), 2u);
  EXPECT_EQ(s.experiments[1].spec.simulation().seed(), 4u);
}

TEST(SweepSpec, NoAxesIsTheBaseAlone) {
  EXPECT_EQ(expand("name: \"one\"").experiments.size(), 1u);
}

TEST(SweepSpec, ErrorsNameThePath) {
  auto has = [](const std::string& error, const std::string& part) {
    return error.find(part) != std::string::npos;
  };
  std::string e = error_of(R"(axes { path: "job.parallelism.tp" values: ["4"] })");
  EXPECT_TRUE(has(e, "job.parallelism.tp: unknown field 'tp'")) << e;
  EXPECT_TRUE(has(e, "tensor_parallel")) << e;  // lists the fields that exist
  e = error_of(R"(axes { path: "simulation.seed" })");
  EXPECT_TRUE(has(e, "simulation.seed: axis has no values")) << e;
  e = error_of(R"(axes { path: "simulation.seed" values: ["x"] })");
  EXPECT_TRUE(has(e, "simulation.seed: value 'x' is not an unsigned 64-bit integer")) << e;
  e = error_of(R"(axes { path: "job.parallelism.tensor_parallel" values: ["-1"] })");
  EXPECT_TRUE(has(e, "job.parallelism.tensor_parallel: value '-1'")) << e;
  e = error_of(R"(axes { path: "job.model.dtype" values: ["BF17"] })");
  EXPECT_TRUE(has(e, "job.model.dtype: value 'BF17' is not a DType")) << e;
  e = error_of(R"(axes { path: "cluster.fat_tree.links.5.bandwidth_gbps" values: ["1"] })");
  EXPECT_TRUE(has(e, "cluster.fat_tree.links.5.bandwidth_gbps: index 5 is out of range")) << e;
  e = error_of(R"(axes { path: "cluster.fat_tree.links.bandwidth_gbps" values: ["1"] })");
  EXPECT_TRUE(has(e, "is a repeated field; give an element index")) << e;
  e = error_of(R"(axes { path: "cluster.fat_tree" values: ["1"] })");
  EXPECT_TRUE(has(e, "cluster.fat_tree: 'cluster.fat_tree' is a message")) << e;
  e = error_of(R"(axes { path: "cluster.nodes.x" values: ["1"] })");
  EXPECT_TRUE(has(e, "cluster.nodes.x: 'cluster.nodes' is a value")) << e;
  e = error_of(R"(axes { path: "cluster_file" values: ["a"] })");
  EXPECT_TRUE(has(e, "cluster_file: 'cluster_file' is not used by the base")) << e;
  e = error_of(R"(zip { axes { path: "simulation.seed" values: ["1", "2"] }
                        axes { path: "simulation.steps" values: ["1"] } })");
  EXPECT_TRUE(has(e, "simulation.steps: zipped with simulation.seed but has 1 values, not 2")) << e;
  e = error_of(
      R"(axes { path: "simulation.seed" values: ["1"] } axes { path: "simulation.seed" values: ["2"] })");
  EXPECT_TRUE(has(e, "simulation.seed: appears in more than one axis")) << e;
  e = error_of(R"(axes { path: "simulation.seed" values: ["1", "1"] })");
  EXPECT_TRUE(has(e, "repeats an earlier one")) << e;
  // A combination the experiment validation rejects names the experiment and its overrides.
  e = error_of(R"(axes { path: "job.parallelism.data_parallel" values: ["4", "64"] })");
  EXPECT_TRUE(has(e, "experiment 1 (job.parallelism.data_parallel=64)")) << e;
  EXPECT_TRUE(has(e, "data_parallel")) << e;  // the experiment validation's own reason
}

}  // namespace
}  // namespace warpsim::spec
