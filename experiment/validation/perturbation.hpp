// Named model-parameter perturbations for `warpsim validate --perturb NAME=FACTOR` (sensitivity of the
// validation sets, docs/validation.md "Sensitivity"): each main parameter of the compute and communication
// models, multiplied by FACTOR in every row through the spec fields that feed it (the compute model's
// job.compute_model.scale, the cluster's bandwidth and latency fields). The shipped rows and the GPU
// profiles are never edited; a perturbation only changes the spec a row is simulated from.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "experiment/spec/experiment.pb.h"

namespace warpsim::experiment::validation {

struct Perturbation {
  std::string name;   // one of perturbable_parameters()
  double factor = 1;  // > 0
};

struct PerturbableParameter {
  std::string_view name;
  std::string_view what;  // the model parameter, and the spec fields it scales
};

// Every name --perturb accepts, in the order the sensitivity table lists them.
std::span<const PerturbableParameter> perturbable_parameters();

// Parses "NAME=FACTOR"; throws std::invalid_argument naming --perturb and the name (not NAME=FACTOR,
// unknown name with the known ones listed, a factor that is not a number > 0).
Perturbation parse_perturbation(const std::string& text);

// `exp` with every perturbation applied (in order; repeated names multiply) and re-validated. Throws
// std::invalid_argument naming --perturb, the name and the field (e.g. a row whose cluster leaves a scaled
// field at 0, its default).
spec::ExperimentSpec apply_perturbations(spec::ExperimentSpec exp, const std::vector<Perturbation>& list);

}  // namespace warpsim::experiment::validation
