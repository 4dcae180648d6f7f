// Flag > spec > default for the settings a spec can also set (see settings.hpp).
#include "experiment/settings.hpp"

#include <cmath>
#include <sstream>

#include "experiment/setting_error.hpp"

namespace warpsim::experiment {

namespace {

template <class T>
std::optional<T> unless(const T& value, const T& unset) {
  return value == unset ? std::nullopt : std::optional<T>(value);
}

}  // namespace

EngineSettings resolve_engine_settings(EngineOptions flags, const SpecOverridingFlags& given,
                                       const spec::SimulationSpec& sim) {
  EngineSettings out;
  const auto sync =
      pick(given.sync, "--sync", unless(sim.sync(), std::string()), "simulation.sync", flags.sync);
  const auto seed = pick(given.seed, "--seed", unless(static_cast<std::int64_t>(sim.seed()), std::int64_t{0}),
                         "simulation.seed", flags.seed);
  const auto partition = pick(given.partition, "--partition", unless(sim.partition(), std::string()),
                              "simulation.partition", flags.partition);
  out.options = std::move(flags);
  out.options.sync = sync.value;
  out.options.seed = seed.value;
  out.options.partition = partition.value;
  // A default is the flag's default: its errors name the flag. A spec field's errors read like the spec
  // loader's ("experiment spec: simulation.sync ...").
  const auto named = [](const std::string& source, const char* flag) {
    return source == "default"        ? std::string(flag)
           : source.starts_with("--") ? source
                                      : "experiment spec: " + source;
  };
  out.sources.sync = named(sync.source, "--sync");
  out.sources.partition = named(partition.source, "--partition");
  return out;
}

Setting<SimTime> resolve_sample_interval(const std::optional<double>& flag_ns,
                                         const spec::SimulationSpec& sim) {
  if (flag_ns) {
    if (!(*flag_ns > 0) || !std::isfinite(*flag_ns)) {
      std::ostringstream got;
      got << *flag_ns;
      throw SettingError("--sample-interval must be > 0 ns (got " + got.str() + ")");
    }
    const auto ps = static_cast<SimTime>(std::llround(*flag_ns * static_cast<double>(kPicosPerNano)));
    if (ps == 0) throw SettingError("--sample-interval is below one picosecond");
    return {ps, "--sample-interval"};
  }
  if (sim.sample_interval_ns() != 0)
    return {sim.sample_interval_ns() * kPicosPerNano, "simulation.sample_interval_ns"};
  return {0, "automatic"};
}

}  // namespace warpsim::experiment
