// Per-stage layer counts of an even or Megatron-style uneven pipeline split (see stage_layers.hpp).
#include "models/workload/stage_layers.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace warpsim::workload {

namespace {

[[noreturn]] void fail(const std::string& field, const std::string& what) {
  throw std::invalid_argument("job spec: " + field + ": " + what);
}

std::string str(std::uint64_t v) {
  return std::to_string(v);
}

}  // namespace

StageLayers::StageLayers(std::uint32_t layers, std::uint32_t stages, std::uint32_t chunks,
                         std::uint32_t first, std::uint32_t last)
    : chunks_(chunks), even_(first == 0 && last == 0) {
  if (stages == 0 || chunks == 0 || layers == 0) fail("model.num_layers", "no layers or no stages");
  const std::string vpp = "parallelism.virtual_stages_per_rank";
  if (even_) {
    const std::uint64_t n = std::uint64_t{stages} * chunks;
    if (layers % n != 0) {
      fail(
          "model.num_layers",
          str(layers) + " is not a multiple of pipeline_parallel x virtual_stages_per_rank (" + str(n) + ")");
    }
    per_stage_.assign(stages, static_cast<std::uint32_t>(layers / stages));
  } else {
    if (stages < 2)
      fail(first ? "parallelism.first_stage_layers" : "parallelism.last_stage_layers",
           "needs parallelism.pipeline_parallel > 1");
    std::uint64_t rest = layers;
    std::uint32_t middle = stages;
    for (const auto& [count, field] : {std::pair{first, "parallelism.first_stage_layers"},
                                       std::pair{last, "parallelism.last_stage_layers"}}) {
      if (count == 0) continue;
      if (count % chunks != 0) {
        fail(field, str(count) + " is not a multiple of " + vpp + " (" + str(chunks) + ")");
      }
      if (count > rest) {
        fail(field, str(count) + " leaves a negative number of layers of model.num_layers=" + str(layers) +
                        " for the other stages");
      }
      rest -= count;
      --middle;
    }
    const std::string field = last ? "parallelism.last_stage_layers" : "parallelism.first_stage_layers";
    if ((rest == 0) != (middle == 0)) {
      fail(field, str(rest) + " layers remain for " + str(middle) +
                      " middle stage(s) of model.num_layers=" + str(layers));
    }
    if (middle > 0 && rest % middle != 0) {
      fail(field, "the remaining " + str(rest) + " of model.num_layers=" + str(layers) +
                      " do not split evenly over the " + str(middle) + " middle stage(s)");
    }
    const std::uint32_t mid = middle ? static_cast<std::uint32_t>(rest / middle) : 0;
    if (middle > 0 && mid % chunks != 0) {
      fail(field, "each middle stage gets " + str(mid) + " layers, not a multiple of " + vpp + " (" +
                      str(chunks) + ")");
    }
    per_stage_.assign(stages, mid);
    if (first) per_stage_.front() = first;
    if (last) per_stage_.back() = last;
  }
  chunk_prefix_.resize(stages);
  std::uint32_t sum = 0;
  for (std::uint32_t s = 0; s < stages; ++s) {
    chunk_prefix_[s] = sum;
    sum += chunk(s);
  }
  round_ = sum;
}

std::uint32_t StageLayers::max_stage() const {
  return *std::max_element(per_stage_.begin(), per_stage_.end());
}

}  // namespace warpsim::workload
