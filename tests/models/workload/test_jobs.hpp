// Job specs shared by the workload tests (text format, as users write them).
#pragma once

#include <memory>
#include <string>

#include "models/workload/job.hpp"

namespace warpsim::workload::testing {

// A small GPT-like dense job; `parallel` is the text of the parallelism block, `training` of the training
// block, so each test states the degrees it exercises.
std::string dense_spec_text(const std::string& parallel, const std::string& training,
                            std::uint64_t world = 0);
std::string moe_spec_text(const std::string& parallel, const std::string& training);
std::shared_ptr<const Job> make_job(const std::string& text);

}  // namespace warpsim::workload::testing
