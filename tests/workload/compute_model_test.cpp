// Roofline compute model, efficiency curves, GPU profiles and the measured-table override.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "models/workload/compute_model.hpp"
#include "models/workload/gpu_profile.hpp"
#include "models/workload/measured_table.hpp"

namespace warpsim::workload {
namespace {

TEST(GpuProfiles, ShippedProfilesAreConsistent) {
  for (const char* name : {"A100-80GB", "H100-SXM", "H200", "B200"}) {
    const GpuProfile& g = find_gpu_profile(name);
    EXPECT_GT(g.peak_bf16_flops, g.peak_fp32_flops) << name;
    EXPECT_GT(g.hbm_bytes_per_s, 1e12) << name;
    EXPECT_GT(g.tdp_watts, 0) << name;
  }
  EXPECT_EQ(find_gpu_profile("A100-80GB").peak_bf16_flops, 312e12);
  EXPECT_EQ(find_gpu_profile("A100-80GB").peak_flops(DType::kFp8), 0.0);  // no FP8 tensor cores
  EXPECT_THROW(find_gpu_profile("V100"), std::invalid_argument);
}

TEST(ComputeModel, RooflineLimits) {
  const GpuProfile& g = find_gpu_profile("H100-SXM");
  EfficiencyParams p;
  const ComputeModel m(g, p);
  // A large square GEMM is compute-bound: time = flops / (peak * eff_max) + overhead.
  const double n = 8192;
  const ComputeWork gemm{"gemm", 2 * n * n * n, 2 * 3 * n * n, DType::kBf16};
  EXPECT_NEAR(m.seconds(gemm), gemm.flops / (g.peak_bf16_flops * p.compute_eff_max) + p.op_overhead_s, 1e-12);
  // An elementwise op is memory-bound.
  const ComputeWork copy{"copy", 1e6, 1e9, DType::kBf16};
  EXPECT_NEAR(m.seconds(copy), 1e9 / (g.hbm_bytes_per_s * p.memory_eff_max) + p.op_overhead_s, 1e-12);
  // FP8 doubles the compute-bound rate on H100.
  const ComputeWork gemm8{"gemm", gemm.flops, gemm.bytes / 2, DType::kFp8};
  EXPECT_LT(m.seconds(gemm8), 0.51 * m.seconds(gemm) + p.op_overhead_s);
}

TEST(ComputeModel, EfficiencyCurveSaturates) {
  const GpuProfile& g = find_gpu_profile("A100-80GB");
  EfficiencyParams p;
  const ComputeModel m(g, p);
  const double half = g.peak_bf16_flops * p.compute_eff_max * p.op_overhead_s;
  EXPECT_NEAR(m.compute_efficiency(half), p.compute_eff_max / 2, 1e-12);
  EXPECT_LT(m.compute_efficiency(1e6), m.compute_efficiency(1e9));
  EXPECT_LT(m.compute_efficiency(1e9), m.compute_efficiency(1e13));
  EXPECT_NEAR(m.compute_efficiency(1e16), p.compute_eff_max, 1e-3);
  // The curve and the closed form agree: flops / (peak * eff(W)) equals the modelled time.
  const ComputeWork w{"w", 5e9, 1e3, DType::kBf16};
  EXPECT_NEAR(m.seconds(w), w.flops / (g.peak_bf16_flops * m.compute_efficiency(w.flops)), 1e-12);
  EXPECT_THROW(ComputeModel(g, EfficiencyParams{1.5, 0.8, 0}), std::invalid_argument);
}

TEST(MeasuredTable, OverridesMatchingOps) {
  auto table = std::make_shared<const MeasuredTable>(MeasuredTable::parse(
      "# measured on a test box\nop,flops,time_us\nqkv_fwd,1000,12.5\nsoftmax_fwd,*,3\n\nqkv_fwd,2000, "
      "20\n"));
  EXPECT_EQ(table->size(), 3u);
  const ComputeModel m(find_gpu_profile("H200"), {}, table);
  EXPECT_DOUBLE_EQ(m.seconds({"qkv_fwd", 1000, 0, DType::kBf16}), 12.5e-6);
  EXPECT_DOUBLE_EQ(m.seconds({"qkv_fwd", 2000, 0, DType::kBf16}), 20e-6);
  EXPECT_DOUBLE_EQ(m.seconds({"softmax_fwd", 77, 5, DType::kBf16}), 3e-6);
  // No row: the model answers.
  const ComputeModel plain(find_gpu_profile("H200"));
  EXPECT_DOUBLE_EQ(m.seconds({"qkv_fwd", 3000, 10, DType::kBf16}),
                   plain.seconds({"qkv_fwd", 3000, 10, DType::kBf16}));
}

std::string table_error(const std::string& csv) {
  try {
    MeasuredTable::parse(csv, "t.csv");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(MeasuredTable, MalformedRowsNameTheLine) {
  EXPECT_NE(table_error("op,time\n").find("t.csv:1:"), std::string::npos);
  EXPECT_NE(table_error("op,flops,time_us\na,1,2\nb,x,3\n").find("t.csv:3: flops"), std::string::npos);
  EXPECT_NE(table_error("op,flops,time_us\na,1\n").find("t.csv:2: expected 3 columns"), std::string::npos);
  EXPECT_NE(table_error("op,flops,time_us\n# c\na,1,-4\n").find("t.csv:3: time_us"), std::string::npos);
  EXPECT_NE(table_error("op,flops,time_us\na,1,4\na,1,5\n").find("t.csv:3: duplicate"), std::string::npos);
  EXPECT_NE(table_error("").find("empty table"), std::string::npos);
  EXPECT_EQ(table_error("op,flops,time_us\na,*,1e3\n"), "");
}

}  // namespace
}  // namespace warpsim::workload
