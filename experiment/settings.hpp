// The one place where command-line flags override spec fields: for each setting of a run, flag > spec >
// default, and each setting is checked once, by the code here, with an error (SettingError) that names
// where the bad value came from ("--sync", "simulation.partition", ...). Settings: sync mode, seed and
// partition strategy (simulation.{sync,seed,partition}), the HDF5 sample interval
// (simulation.sample_interval_ns) and, through experiment/fidelity.hpp, the network fidelity.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "engine/kernel/engine_config.hpp"
#include "experiment/engine_settings.hpp"
#include "experiment/spec/experiment.pb.h"

namespace warpsim::experiment {

// A setting's value and where it came from: a flag name, a spec field or "default".
template <class T>
struct Setting {
  T value{};
  std::string source;
};

// flag > spec > default; nullopt = not given (flag) or unset (spec field).
template <class T>
Setting<T> pick(const std::optional<T>& flag, std::string flag_name, const std::optional<T>& spec_value,
                std::string spec_field, T fallback) {
  if (flag) return {*flag, std::move(flag_name)};
  if (spec_value) return {*spec_value, std::move(spec_field)};
  return {std::move(fallback), "default"};
}

// The flags of a run that a spec field can also set: present = given on the command line.
struct SpecOverridingFlags {
  std::optional<std::string> sync;
  std::optional<std::int64_t> seed;
  std::optional<std::string> partition;
  std::optional<double> sample_interval_ns;
};

// The engine settings of a run after the spec's simulation section was applied.
struct EngineSettings {
  EngineOptions options;   // the flags with the spec's values where no flag was given
  SettingSources sources;  // named in the errors of to_engine_config
};

// `flags` holds the command line's values (or defaults), `given` which of them the user wrote. A spec
// value the flag does not override replaces the default; simulation.seed 0 means unset.
EngineSettings resolve_engine_settings(EngineOptions flags, const SpecOverridingFlags& given,
                                       const spec::SimulationSpec& sim);

// The sample interval of `warpsim run --output`: --sample-interval (ns, > 0) > simulation.sample_interval_ns
// > automatic (value 0, source "automatic"). In picoseconds.
Setting<SimTime> resolve_sample_interval(const std::optional<double>& flag_ns,
                                         const spec::SimulationSpec& sim);

}  // namespace warpsim::experiment
