// Each reduction of `warpsim validate` (validation.proto's ValidationReduction) against the whole simulation
// on a job small enough for both; the measured differences are in docs/validation.md ("Reductions against
// the full simulation").
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "experiment/spec/experiment_spec.hpp"
#include "experiment/spec/validation_spec.hpp"
#include "experiment/validation/row_evaluation.hpp"

namespace warpsim::experiment::validation {
namespace {

const std::string kRoot = std::string(WARPSIM_SOURCE_DIR) + "/validation";

// The reductions against the whole simulation on a job where both fit: the 1.7B row reshaped to TP1 PP4 DP8
// (32 GPUs, 32 micro-batches per pipeline, scatter/gather p2p). Measured differences are in
// docs/validation.md ("Reductions against the full simulation").
spec::ExperimentSpec pipeline_row() {
  spec::ExperimentSpec s = spec::load_validation_row(kRoot + "/megatron-sc21/01-1.7b-32xa100.textproto");
  auto& p = *s.mutable_job()->mutable_parallelism();
  p.set_pipeline_parallel(4);
  p.set_data_parallel(8);
  p.set_pipeline_scatter_gather(true);
  // The row's training settings before it took the authors' micro-batch 16 and torch DDP: 1 sequence per
  // micro-batch, the DP all-reduce (fp32, 40 MB buckets) after the flush, which the dp_replica reduction
  // needs (it does not model an overlapped reduce).
  auto& t = *s.mutable_job()->mutable_training();
  t.set_global_batch_sequences(256);
  t.set_micro_batch_sequences(1);
  t.set_overlap_grad_reduce(false);
  t.set_grad_reduce_fp32(true);
  t.set_grad_bucket_bytes(40000000);
  return spec::validated(std::move(s));
}

TEST(Reductions, AgreeWithTheFullSimulation) {
  const spec::ExperimentSpec full_row = pipeline_row();
  const std::string path = kRoot + "/megatron-sc21/pipeline-check.textproto";
  RowOptions whole;
  whole.full = true;
  const RowResult full = evaluate_row(full_row, path, whole);
  spec::ExperimentSpec replica_row = full_row;
  replica_row.mutable_validation()->mutable_reduction()->set_dp_replica(true);
  const RowResult replica = evaluate_row(replica_row, path);
  spec::ExperimentSpec both_row = replica_row;
  both_row.mutable_validation()->mutable_reduction()->add_microbatch_points(8);
  both_row.mutable_validation()->mutable_reduction()->add_microbatch_points(16);
  const RowResult both = evaluate_row(both_row, path);
  spec::ExperimentSpec points_row = full_row;
  points_row.mutable_validation()->mutable_reduction()->add_microbatch_points(8);
  points_row.mutable_validation()->mutable_reduction()->add_microbatch_points(16);
  const RowResult points = evaluate_row(points_row, path);
  const double d_replica = replica.step_seconds / full.step_seconds - 1;
  const double d_points = points.step_seconds / full.step_seconds - 1;
  const double d_both = both.step_seconds / full.step_seconds - 1;
  RecordProperty("full_step_s", std::to_string(full.step_seconds));
  RecordProperty("dp_replica_step_s", std::to_string(replica.step_seconds));
  RecordProperty("points_step_s", std::to_string(points.step_seconds));
  RecordProperty("both_step_s", std::to_string(both.step_seconds));
  std::printf("full %.6f s, dp replica %.6f s (%+.3f%%), points %.6f s (%+.3f%%), both %.6f s (%+.3f%%)\n",
              full.step_seconds, replica.step_seconds, 100 * d_replica, points.step_seconds, 100 * d_points,
              both.step_seconds, 100 * d_both);
  EXPECT_EQ(full.simulations, 1u);
  EXPECT_EQ(replica.simulations, 3u);
  EXPECT_EQ(both.simulations, 4u);
  EXPECT_LT(std::abs(d_replica), 0.01);
  EXPECT_LT(std::abs(d_points), 0.01);
  EXPECT_LT(std::abs(d_both), 0.01);
}

}  // namespace
}  // namespace warpsim::experiment::validation
