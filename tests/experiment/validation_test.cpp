// `warpsim validate`'s library (experiment/validation/, experiment/spec/validation_spec): the row checks name
// the field; every shipped row loads; the reductions' spec variants; the report's summary, CSV, Markdown
// block rewrite and result round trip; the --set/--scale overrides; the --perturb parameters reach the
// spec fields and the compute model (the reductions against the full simulation are
// validation_reduction_test.cpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <string>

#include "experiment/spec/experiment_spec.hpp"
#include "experiment/spec/job_spec.hpp"
#include "experiment/spec/validation_spec.hpp"
#include "experiment/validation/perturbation.hpp"
#include "experiment/validation/row_variants.hpp"
#include "experiment/validation/spec_overrides.hpp"
#include "experiment/validation/validation_report.hpp"
#include "experiment/validation/validation_sets.hpp"
#include "models/workload/job.hpp"

namespace warpsim::experiment::validation {
namespace {

const std::string kRoot = std::string(WARPSIM_SOURCE_DIR) + "/validation";
const std::string kRow17b = kRoot + "/megatron-sc21/01-1.7b-32xa100.textproto";
const std::string kRow1t = kRoot + "/megatron-sc21/10-1t-3072xa100.textproto";

std::string check_error(const spec::ExperimentSpec& s) {
  try {
    spec::validate_validation_spec(s);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(ValidationSpec, BadRowsNameTheField) {
  const spec::ExperimentSpec good = spec::load_validation_row(kRow17b);
  EXPECT_EQ(check_error(good), "");
  auto with = [&](auto edit) {
    spec::ExperimentSpec s = good;
    edit(*s.mutable_validation());
    return check_error(s);
  };
  spec::ExperimentSpec none = good;
  none.clear_validation();
  EXPECT_NE(check_error(none).find("experiment spec: validation: required"), std::string::npos);
  EXPECT_NE(with([](auto& v) { v.clear_reference(); }).find("validation.reference: required"),
            std::string::npos);
  EXPECT_NE(with([](auto& v) { v.set_reference(-3); }).find("validation.reference: must be"),
            std::string::npos);
  EXPECT_NE(with([](auto& v) { v.clear_metric(); }).find("validation.metric: required"), std::string::npos);
  EXPECT_NE(with([](auto& v) { v.set_metric("mfu"); }).find("validation.metric: unknown metric 'mfu'"),
            std::string::npos);
  EXPECT_NE(with([](auto& v) { v.clear_source(); }).find("validation.source: required"), std::string::npos);
  EXPECT_NE(with([](auto& v) { v.set_flop_count("some"); }).find("validation.flop_count"), std::string::npos);
  EXPECT_NE(with([](auto& v) {
              v.mutable_reduction()->add_microbatch_points(4);
            }).find("validation.reduction.microbatch_points: needs exactly two"),
            std::string::npos);
  EXPECT_NE(with([](auto& v) {
              v.mutable_reduction()->add_microbatch_points(8);
              v.mutable_reduction()->add_microbatch_points(4);
            }).find("validation.reduction.microbatch_points: must be"),
            std::string::npos);
  // 16 micro-batches per pipeline (the row's 16 sequences per replica, one per micro-batch): a point at 16
  // is no reduction.
  spec::ExperimentSpec mb1 = good;
  mb1.mutable_job()->mutable_training()->set_micro_batch_sequences(1);
  mb1.mutable_validation()->mutable_reduction()->add_microbatch_points(8);
  mb1.mutable_validation()->mutable_reduction()->add_microbatch_points(16);
  EXPECT_NE(check_error(mb1).find("the job's 16 micro-batches"), std::string::npos);
  spec::ExperimentSpec no_dp = good;
  no_dp.mutable_job()->mutable_parallelism()->set_data_parallel(1);
  no_dp.mutable_job()->set_world_size_gpus(1);
  no_dp.mutable_validation()->mutable_reduction()->set_dp_replica(true);
  EXPECT_NE(check_error(no_dp).find("validation.reduction.dp_replica: needs data_parallel > 1"),
            std::string::npos);
}

TEST(ValidationSets, EveryShippedRowLoads) {
  const auto sets = shipped_sets(kRoot);
  ASSERT_GE(sets.size(), 2u);
  const auto rows = list_rows(sets, {});
  EXPECT_GE(rows.size(), 18u);
  for (const auto& r : rows) {
    SCOPED_TRACE(r.path);
    const spec::ExperimentSpec s = spec::load_validation_row(r.path);
    EXPECT_GT(s.validation().reference(), 0);
    EXPECT_FALSE(s.validation().assumptions().empty());
  }
  EXPECT_EQ(list_rows({kRoot + "/megatron-sc21"}, {}).size(), 10u);
  EXPECT_EQ(list_rows({kRoot + "/megatron-sc21"}, {"megatron-sc21/0[1-3]-*"}).size(), 3u);
  EXPECT_EQ(list_rows({kRoot + "/megatron-sc21"}, {"10-1t-*"}).size(), 1u);
  EXPECT_THROW(list_rows({kRoot + "/no-such-set"}, {}), std::invalid_argument);
}

TEST(RowVariants, ReplicaAndMicrobatches) {
  const spec::ExperimentSpec row = spec::load_validation_row(kRow1t);
  const spec::ExperimentSpec r = dp_replica(row);
  EXPECT_EQ(r.job().parallelism().data_parallel(), 1u);
  EXPECT_EQ(spec::world_size(r.job()), 512u);
  EXPECT_EQ(r.job().training().global_batch_sequences(), 512u);
  EXPECT_EQ(r.cluster().nodes(), 64u);
  EXPECT_EQ(spec::microbatches_per_step(r.job()), spec::microbatches_per_step(row.job()));
  // Without its data-parallel group a replica's ZeRO state is unsharded: its memory is not the row's.
  EXPECT_TRUE(r.job().training().allow_hbm_overflow());
  const spec::ExperimentSpec m = with_microbatches(r, 128);
  EXPECT_EQ(spec::microbatches_per_step(m.job()), 128u);
  EXPECT_EQ(with_microbatches(row, 64).job().training().global_batch_sequences(), 64u * 6);
}

TEST(ValidationReport, SummaryCsvMarkdownAndBlocks) {
  RowResult a;
  a.set = "s";
  a.row = "a";
  a.reference = 100;
  a.prediction = 95;
  a.source = "paper, table 1, \"row a\"";
  RowResult b = a;
  b.row = "b";
  b.prediction = 112;
  RowResult c = a;
  c.row = "c";
  c.error_text = "exit 1: boom";
  const Summary s = summarize({a, b, c});
  EXPECT_EQ(s.rows, 2u);
  EXPECT_EQ(s.failed, 1u);
  EXPECT_NEAR(s.mean_abs_error, (0.05 + 0.12) / 2, 1e-12);
  ASSERT_TRUE(s.worst);
  EXPECT_EQ(*s.worst, 1u);
  EXPECT_EQ(s.within_10, 1u);
  EXPECT_EQ(percent(b.error()), "+12.0%");
  const std::string csv = to_csv({a, b, c});
  EXPECT_NE(csv.find("\"paper, table 1, \"\"row a\"\"\""), std::string::npos);
  EXPECT_NE(csv.find(",-0.05000,"), std::string::npos);
  const std::string md = to_markdown({a, b}, "warpsim validate validation/s");
  EXPECT_NE(md.find("| a |"), std::string::npos);
  EXPECT_NE(md.find("Mean absolute error 8.5%"), std::string::npos);
  EXPECT_NE(md.find("worst row b +12.0%"), std::string::npos);
  const std::string doc = "x\n<!-- validate:begin s -->\nold\n<!-- validate:end s -->\ny\n";
  EXPECT_EQ(rewrite_block(doc, "s", "new\n"),
            "x\n<!-- validate:begin s -->\nnew\n<!-- validate:end s -->\ny\n");
  EXPECT_THROW(rewrite_block(doc, "t", "new\n"), std::invalid_argument);
  const RowResult back = parse_row_result([&] {
    std::ostringstream o;
    to_report(b).print(o);
    return o.str();
  }());
  EXPECT_EQ(back.row, "b");
  EXPECT_DOUBLE_EQ(back.prediction, 112);
  EXPECT_EQ(back.source, a.source);
}

TEST(SpecOverrides, SetScaleAndErrors) {
  const spec::ExperimentSpec row = spec::load_validation_row(kRow17b);
  const auto set = parse_override("job.compute_model.compute_eff_max=0.72", Override::Kind::kSet);
  const auto scale = parse_override("cluster.fat_tree.links.bandwidth_gbps=0.9", Override::Kind::kScale);
  const spec::ExperimentSpec s = apply_overrides(row, {set, scale});
  EXPECT_DOUBLE_EQ(s.job().compute_model().compute_eff_max(), 0.72);
  for (const auto& l : s.cluster().fat_tree().links()) EXPECT_DOUBLE_EQ(l.bandwidth_gbps(), 180);
  auto error_of = [&](const std::string& text, Override::Kind kind) -> std::string {
    try {
      apply_overrides(row, {parse_override(text, kind)});
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of("job.nope=1", Override::Kind::kSet).find("--set job.nope: no field 'nope'"),
            std::string::npos);
  EXPECT_NE(error_of("job.compute_model.compute_eff_max=1.1", Override::Kind::kScale).find("is 0"),
            std::string::npos);
  EXPECT_NE(error_of("job.compute_model.compute_eff_max=x", Override::Kind::kSet).find("not a number"),
            std::string::npos);
  EXPECT_THROW(parse_override("novalue", Override::Kind::kSet), std::invalid_argument);
}

std::string perturb_error(const spec::ExperimentSpec& row, const std::string& text) {
  try {
    apply_perturbations(row, {parse_perturbation(text)});
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Perturbation, BadPerturbationsNameTheParameter) {
  const spec::ExperimentSpec row = spec::load_validation_row(kRow17b);
  EXPECT_EQ(perturb_error(row, "gemm_eff=1.1"), "");
  EXPECT_NE(perturb_error(row, "gemm=1.1").find("--perturb gemm: unknown parameter (known: gemm_eff,"),
            std::string::npos);
  EXPECT_NE(perturb_error(row, "nic_bw=0").find("--perturb nic_bw: factor must be a number > 0"),
            std::string::npos);
  EXPECT_NE(perturb_error(row, "nic_bw=-0.1").find("--perturb nic_bw: factor"), std::string::npos);
  EXPECT_NE(perturb_error(row, "nic_bw=x").find("--perturb nic_bw: factor"), std::string::npos);
  EXPECT_NE(perturb_error(row, "nic_bw").find("not NAME=FACTOR"), std::string::npos);
  // A100 FP16 GEMMs at 0.826 of peak cannot run 30% faster: refused before any simulation.
  const std::string over = perturb_error(row, "gemm_eff=1.3");
  EXPECT_NE(over.find("--perturb gemm_eff: job.compute_model.scale: the BF16 GEMM efficiency"),
            std::string::npos)
      << over;
  EXPECT_EQ(perturbable_parameters().size(), 7u);
}

TEST(Perturbation, ReachesTheSpecFieldsAndTheComputeModel) {
  const spec::ExperimentSpec row = spec::load_validation_row(kRow17b);
  auto perturbed = [&](std::vector<std::string> texts) {
    std::vector<Perturbation> list;
    for (const auto& t : texts) list.push_back(parse_perturbation(t));
    return apply_perturbations(row, list);
  };
  // Compute parameters: the job's compute_model.scale, and through it the compute model.
  const spec::ExperimentSpec gemm = perturbed({"gemm_eff=1.1"});
  EXPECT_DOUBLE_EQ(gemm.job().compute_model().scale().gemm_eff(), 1.1);
  EXPECT_DOUBLE_EQ(perturbed({"kernel_gap=1.1", "kernel_gap=2"}).job().compute_model().scale().kernel_gap(),
                   2.2);
  const workload::Job base_job(spec::to_job_params(row.job()));
  const workload::Job gemm_job(spec::to_job_params(gemm.job()));
  const auto& b = base_job.compute();
  const auto& g = gemm_job.compute();
  EXPECT_DOUBLE_EQ(g.kernel_efficiency(workload::KernelKind::kMatmul, workload::DType::kFp16),
                   1.1 * b.kernel_efficiency(workload::KernelKind::kMatmul, workload::DType::kFp16));
  const spec::ExperimentSpec others = perturbed({"sustained_clock=0.9", "hbm_eff=0.9", "kernel_gap=1.1"});
  const workload::Job others_job(spec::to_job_params(others.job()));
  const auto& o = others_job.compute();
  EXPECT_DOUBLE_EQ(o.kernel_efficiency(workload::KernelKind::kAttentionFwd, workload::DType::kFp16),
                   0.9 * b.kernel_efficiency(workload::KernelKind::kAttentionFwd, workload::DType::kFp16));
  EXPECT_DOUBLE_EQ(o.params().memory_eff_max, 0.9 * b.params().memory_eff_max);
  EXPECT_DOUBLE_EQ(o.params().op_overhead_s, 1.1 * b.params().op_overhead_s);
  // Network parameters: the cluster's fields (the row: 2400 Gb/s NVLink at 300 ns, 200 Gb/s links at
  // 600 ns, 500 ns injection, 130 ns switches).
  const auto& c0 = row.cluster();
  const auto nv = perturbed({"nvlink_bw=1.1"}).cluster();
  EXPECT_DOUBLE_EQ(nv.scale_up().nvlink_bandwidth_gbps(), 1.1 * c0.scale_up().nvlink_bandwidth_gbps());
  EXPECT_EQ(nv.fat_tree().links(0).bandwidth_gbps(), c0.fat_tree().links(0).bandwidth_gbps());
  const auto nic = perturbed({"nic_bw=0.9"}).cluster();
  ASSERT_EQ(nic.fat_tree().links_size(), c0.fat_tree().links_size());
  for (int i = 0; i < nic.fat_tree().links_size(); ++i) {
    EXPECT_DOUBLE_EQ(nic.fat_tree().links(i).bandwidth_gbps(), 0.9 * c0.fat_tree().links(i).bandwidth_gbps());
  }
  EXPECT_EQ(nic.scale_up().nvlink_bandwidth_gbps(), c0.scale_up().nvlink_bandwidth_gbps());
  const auto lat = perturbed({"collective_latency=1.1"}).cluster();
  EXPECT_EQ(lat.scale_up().nvlink_latency_ns(), 330u);
  for (const auto& l : lat.fat_tree().links()) EXPECT_EQ(l.latency_ns(), 660u);
  EXPECT_EQ(lat.nic().injection_latency_ns(), 550u);
  EXPECT_EQ(lat.network().switch_latency_ns(), 143u);
  EXPECT_EQ(lat.scale_up().nvlink_bandwidth_gbps(), c0.scale_up().nvlink_bandwidth_gbps());
}

}  // namespace
}  // namespace warpsim::experiment::validation
