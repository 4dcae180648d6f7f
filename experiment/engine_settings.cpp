// Engine settings -> EngineConfig, checked once (see engine_settings.hpp).
#include "experiment/engine_settings.hpp"

#include <cmath>
#include <filesystem>
#include <string>

#include "engine/kernel/checkpoint_signal.hpp"
#include "experiment/byte_count.hpp"
#include "experiment/setting_error.hpp"

namespace warpsim::experiment {

void apply_checkpoint_options(const CheckpointOptions& o, const std::string& at_flag, SimTime time_unit_ps,
                              EngineConfig& config) {
  const bool writes = !o.dir.empty();
  if (!writes && o.at != 0) throw SettingError(at_flag + " needs --checkpoint-dir");
  if (!writes && o.every_seconds != 0)
    throw SettingError("--checkpoint-every-seconds needs --checkpoint-dir");
  if (!writes && o.stop) throw SettingError("--stop-at-checkpoint needs --checkpoint-dir");
  if (!(o.at >= 0) || !std::isfinite(o.at)) throw SettingError(at_flag + " must be a finite time > 0");
  if (!(o.every_seconds >= 0) || !std::isfinite(o.every_seconds))
    throw SettingError("--checkpoint-every-seconds must be a finite number of seconds > 0");
  if (writes && std::filesystem::exists(o.dir) && !std::filesystem::is_directory(o.dir))
    throw SettingError("--checkpoint-dir: '" + o.dir + "' exists and is not a directory");
  if (!o.resume.empty() && !std::filesystem::is_directory(o.resume))
    throw SettingError("--resume: '" + o.resume + "' is not a directory");
  CheckpointConfig& c = config.checkpoint;
  c.dir = o.dir;
  if (o.at > 0) {
    c.at = static_cast<SimTime>(std::llround(o.at * static_cast<double>(time_unit_ps)));
    if (c.at == 0) throw SettingError(at_flag + " is below one picosecond");
  }
  c.every_seconds = o.every_seconds;
  c.stop_after_first = o.stop;
  c.resume = o.resume;
  c.on_signal = writes;
  if (writes) install_checkpoint_signal_handlers();
}

namespace {
void require_positive(std::int64_t value, const char* flag) {
  if (value < 1) throw SettingError(std::string(flag) + " must be >= 1 (got " + std::to_string(value) + ")");
}
}  // namespace

EngineConfig to_engine_config(const EngineOptions& o, SimTime end_time, SimTime time_unit_ps, int ranks,
                              const SettingSources& sources) {
  EngineConfig c;
  const auto mode = parse_sync_mode(o.sync);
  if (!mode)
    throw SettingError(sources.sync + ": unknown mode '" + o.sync +
                       "' (expected sequential, conservative or optimistic)");
  c.sync = *mode;
  if (o.seed < 0) throw SettingError("--seed must be >= 0 (got " + std::to_string(o.seed) + ")");
  c.seed = static_cast<std::uint64_t>(o.seed);
  require_positive(o.gvt_interval, "--gvt-interval");
  require_positive(o.poll_interval, "--poll-interval");
  require_positive(o.batch, "--batch");
  if (o.max_uncommitted < 0) {
    throw SettingError("--max-uncommitted must be >= 0 (got " + std::to_string(o.max_uncommitted) + ")");
  }
  if (!(o.optimism_window >= 0) || !std::isfinite(o.optimism_window)) {
    throw SettingError("--optimism-window must be a finite number >= 0");
  }
  if (o.optimism_control != "auto" && o.optimism_control != "adaptive" && o.optimism_control != "fixed")
    throw SettingError("--optimism-control: unknown mode '" + o.optimism_control +
                       "' (expected auto, adaptive or fixed)");
  if (!(o.rollback_target > 0 && o.rollback_target < 1))
    throw SettingError("--rollback-target must be a share in (0, 1) (got " +
                       std::to_string(o.rollback_target) + ")");
  if (o.idle_sleep_us < -1 || o.idle_sleep_us > 1000000)
    throw SettingError("--idle-sleep-us must be -1 (automatic) or 0..1000000 (got " +
                       std::to_string(o.idle_sleep_us) + ")");
  if (o.poll_us < -1 || o.poll_us > 1000000)
    throw SettingError("--poll-us must be -1 (automatic) or 0..1000000 (got " + std::to_string(o.poll_us) +
                       ")");
  if (!(o.progress_seconds >= 0)) throw SettingError("--progress-seconds must be >= 0");
  const bool graph_strategy =
      o.partition == "topology" || o.partition == "topology-striped" || o.partition == "metis";
  if (o.partition != "block" && o.partition != "round-robin" && !(graph_strategy && o.graph_partitions)) {
    throw SettingError(sources.partition + ": unknown strategy '" + o.partition +
                       "' (expected block, round-robin" +
                       (o.graph_partitions ? ", topology, topology-striped or metis)"
                                           : " or, for warpsim run, topology, topology-striped or metis)"));
  }
  c.gvt_interval = static_cast<std::uint32_t>(o.gvt_interval);
  c.poll_interval = static_cast<std::uint32_t>(o.poll_interval);
  c.batch = static_cast<std::uint32_t>(o.batch);
  c.max_uncommitted = static_cast<std::uint64_t>(o.max_uncommitted);
  if (!o.memory_budget.empty()) {
    c.memory_budget_bytes = parse_byte_count(o.memory_budget, "--memory-budget", 1ull << 50, "1 PiB");
    if (c.memory_budget_bytes == 0)
      throw SettingError("--memory-budget must be > 0 (got '" + o.memory_budget + "')");
  }
  c.optimism_control = o.optimism_control == "adaptive" ? OptimismControlMode::kAdaptive
                       : o.optimism_control == "fixed"  ? OptimismControlMode::kFixed
                                                        : OptimismControlMode::kAuto;
  c.rollback_target = o.rollback_target;
  c.optimism_window =
      o.optimism_window == 0
          ? kTimeInfinity
          : static_cast<SimTime>(std::llround(o.optimism_window * static_cast<double>(time_unit_ps)));
  c.progress_seconds = o.progress_seconds;
  c.idle_sleep_us = o.idle_sleep_us;
  c.poll_us = o.poll_us;
  c.end_time = end_time;
  // The engine's own check is the authority; here it only gains the name of the setting's source.
  if (const auto problem = check_config(c, ranks)) {
    throw SettingError(problem->setting == ConfigSetting::kSync
                           ? sources.sync + " " + std::string(to_string(c.sync)) + " " + problem->message
                           : problem->message);
  }
  return c;
}

}  // namespace warpsim::experiment
