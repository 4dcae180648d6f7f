// When the overlapped gradient reduce may start each step-end bucket (grad_buckets.hpp): on a PP=1 job with
// 8 equal layers, bucket q is ready after the last-micro-batch backward of the layer whose gradients complete
// its bytes (head first, then layers 7..0, then the embedding), the ready ops never go back, and the last
// bucket waits for the embedding's backward.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "models/workload/gpu_program.hpp"
#include "models/workload/grad_buckets.hpp"
#include "tests/models/workload/test_jobs.hpp"

namespace warpsim::workload {
namespace {

TEST(GradBuckets, ReadyAfterTheLayerThatCompletesTheBucket) {
  // Probe the job's gradient sizes first, then cut buckets of 2.5 layers.
  const auto probe = testing::make_job(
      testing::dense_spec_text("data_parallel: 2", "global_batch_sequences: 8 overlap_grad_reduce: true"));
  const auto& L = probe->layer_ops();
  const double ge = probe->grad_bytes_per_param();
  const double layer = L.dense_layer_params_per_gpu * ge, head = L.head_params_per_gpu * ge;
  const auto bucket = static_cast<std::uint64_t>(2.5 * layer);
  const auto job = testing::make_job(testing::dense_spec_text(
      "data_parallel: 2",
      "global_batch_sequences: 8 overlap_grad_reduce: true grad_bucket_bytes: " + std::to_string(bucket)));
  const std::vector<std::uint64_t> ready = grad_ready_ops(*job, 0);
  const GpuProgram prog(job, 0, 1);
  std::vector<std::uint64_t> sizes;
  for (const LayerOp& op : job->step_end_ops(0))
    if (is_grad_reduce(op)) sizes.push_back(op.comm_bytes);
  ASSERT_EQ(ready.size(), sizes.size());
  ASSERT_GE(ready.size(), 3u);
  double end = 0;
  for (std::size_t q = 0; q < ready.size(); ++q) {
    SCOPED_TRACE("bucket " + std::to_string(q));
    end += static_cast<double>(sizes[q]);
    const Op op = prog.op(ready[q]);
    EXPECT_EQ(op.phase, Phase::kBackward);
    EXPECT_EQ(op.microbatch + 1, job->microbatches());
    if (q > 0) {
      EXPECT_GE(ready[q], ready[q - 1]);
    }
    if (q + 1 == ready.size()) {  // the remainder holds the embedding: ready after the whole backward
      EXPECT_NE(prog.op(ready[q] + 1).phase, Phase::kBackward);
      continue;
    }
    // The layers after the head that complete `end` bytes (within a byte per bucket of rounding).
    const auto layers = static_cast<std::uint32_t>(std::ceil((end - (q + 1) - head) / layer));
    ASSERT_LE(layers, 8u);
    EXPECT_EQ(op.layer, 8 - layers);
    // The layer's last backward op: next comes another layer's, or the embedding's (labelled layer 0 too).
    const Op next = prog.op(ready[q] + 1);
    EXPECT_TRUE(next.layer != op.layer || next.name.starts_with("embedding")) << "not the layer's last op";
  }
}

}  // namespace
}  // namespace warpsim::workload
