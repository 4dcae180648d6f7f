// Settings precedence (experiment/settings.hpp): a flag beats the spec, the spec beats the default, and a bad
// value is one SettingError naming the flag or spec field it came from.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "experiment/engine_settings.hpp"
#include "experiment/setting_error.hpp"
#include "experiment/settings.hpp"

namespace warpsim::experiment {
namespace {

// The flags given on the command line (the others absent).
SpecOverridingFlags given_sync(std::string v) {
  SpecOverridingFlags g;
  g.sync = std::move(v);
  return g;
}
SpecOverridingFlags given_partition(std::string v) {
  SpecOverridingFlags g;
  g.partition = std::move(v);
  return g;
}

std::string error_of(const EngineSettings& s, int ranks = 1) {
  try {
    to_engine_config(s.options, 1000, 1, ranks, s.sources);
  } catch (const SettingError& e) {
    return e.what();
  }
  return "";
}

TEST(Pick, FlagBeatsSpecBeatsDefault) {
  EXPECT_EQ(pick<int>(3, "--n", 2, "spec.n", 1).value, 3);
  EXPECT_EQ(pick<int>(3, "--n", 2, "spec.n", 1).source, "--n");
  EXPECT_EQ(pick<int>(std::nullopt, "--n", 2, "spec.n", 1).value, 2);
  EXPECT_EQ(pick<int>(std::nullopt, "--n", 2, "spec.n", 1).source, "spec.n");
  EXPECT_EQ(pick<int>(std::nullopt, "--n", std::nullopt, "spec.n", 1).value, 1);
  EXPECT_EQ(pick<int>(std::nullopt, "--n", std::nullopt, "spec.n", 1).source, "default");
}

TEST(EngineSettings, SpecAppliesUnlessTheFlagWasGiven) {
  spec::SimulationSpec sim;
  sim.set_sync("conservative");
  sim.set_seed(7);
  sim.set_partition("round-robin");
  EngineOptions flags;  // defaults: optimistic, seed 1, block
  EngineSettings s = resolve_engine_settings(flags, {}, sim);
  EXPECT_EQ(s.options.sync, "conservative");
  EXPECT_EQ(s.options.seed, 7);
  EXPECT_EQ(s.options.partition, "round-robin");
  EXPECT_EQ(s.sources.sync, "experiment spec: simulation.sync");
  EXPECT_EQ(s.sources.partition, "experiment spec: simulation.partition");

  flags.sync = "sequential";
  flags.seed = 9;
  flags.partition = "block";
  s = resolve_engine_settings(
      flags, {.sync = "sequential", .seed = 9, .partition = "block", .sample_interval_ns = {}}, sim);
  EXPECT_EQ(s.options.sync, "sequential");
  EXPECT_EQ(s.options.seed, 9);
  EXPECT_EQ(s.options.partition, "block");
  EXPECT_EQ(s.sources.sync, "--sync");
  EXPECT_EQ(s.sources.partition, "--partition");
}

TEST(EngineSettings, UnsetSpecFieldsKeepTheDefaults) {
  const EngineSettings s = resolve_engine_settings(EngineOptions{}, {}, spec::SimulationSpec{});
  EXPECT_EQ(s.options.sync, "optimistic");
  EXPECT_EQ(s.options.seed, 1);  // simulation.seed 0 = unset
  EXPECT_EQ(s.options.partition, "block");
  EXPECT_EQ(s.sources.sync, "--sync");  // a default's errors name its flag
}

TEST(EngineSettings, ErrorsNameTheSettingsSource) {
  spec::SimulationSpec sim;
  sim.set_partition("greedy");
  EngineSettings s = resolve_engine_settings(EngineOptions{}, {}, sim);
  EXPECT_EQ(error_of(s).rfind("experiment spec: simulation.partition: unknown strategy 'greedy'", 0), 0u)
      << error_of(s);

  EngineOptions flags;
  flags.partition = "greedy";
  s = resolve_engine_settings(flags, given_partition("greedy"), sim);
  EXPECT_EQ(error_of(s).rfind("--partition: unknown strategy 'greedy'", 0), 0u) << error_of(s);

  flags = {};
  flags.sync = "eventually";
  s = resolve_engine_settings(flags, given_sync("eventually"), {});
  EXPECT_EQ(error_of(s).rfind("--sync: unknown mode 'eventually'", 0), 0u) << error_of(s);
}

TEST(EngineSettings, SequentialOnSeveralRanksIsTheEnginesCheckNamingTheSource) {
  spec::SimulationSpec sim;
  sim.set_sync("sequential");
  const EngineSettings from_spec = resolve_engine_settings(EngineOptions{}, {}, sim);
  EXPECT_EQ(error_of(from_spec, 1), "");
  EXPECT_EQ(error_of(from_spec, 2)
                .rfind("experiment spec: simulation.sync sequential runs on exactly 1 rank (got 2)", 0),
            0u)
      << error_of(from_spec, 2);
  EngineOptions flags;
  flags.sync = "sequential";
  const EngineSettings from_flag = resolve_engine_settings(flags, given_sync("sequential"), {});
  EXPECT_EQ(error_of(from_flag, 4).rfind("--sync sequential runs on exactly 1 rank (got 4)", 0), 0u)
      << error_of(from_flag, 4);
  // The engine's own check says the same.
  EngineConfig c;
  c.sync = SyncMode::kSequential;
  c.end_time = 1;
  ASSERT_TRUE(check_config(c, 2));
  EXPECT_EQ(check_config(c, 2)->setting, ConfigSetting::kSync);
  EXPECT_FALSE(check_config(c, 1));
}

TEST(EngineSettings, EachBadFlagIsOneErrorNamingIt) {
  const auto error = [](auto change) {
    EngineOptions o;
    change(o);
    return error_of({.options = o, .sources = {}});
  };
  EXPECT_NE(error([](EngineOptions& o) { o.seed = -1; }).find("--seed"), std::string::npos);
  EXPECT_NE(error([](EngineOptions& o) { o.gvt_interval = 0; }).find("--gvt-interval"), std::string::npos);
  EXPECT_NE(error([](EngineOptions& o) { o.batch = 0; }).find("--batch"), std::string::npos);
  EXPECT_NE(error([](EngineOptions& o) { o.rollback_target = 1; }).find("--rollback-target"),
            std::string::npos);
  EXPECT_NE(error([](EngineOptions& o) { o.optimism_control = "x"; }).find("--optimism-control"),
            std::string::npos);
  EXPECT_EQ(error([](EngineOptions&) {}), "");
}

TEST(SampleInterval, FlagBeatsSpecBeatsAutomatic) {
  spec::SimulationSpec sim;
  EXPECT_EQ(resolve_sample_interval(std::nullopt, sim).value, 0u);
  EXPECT_EQ(resolve_sample_interval(std::nullopt, sim).source, "automatic");
  sim.set_sample_interval_ns(50);
  EXPECT_EQ(resolve_sample_interval(std::nullopt, sim).value, 50 * kPicosPerNano);
  EXPECT_EQ(resolve_sample_interval(std::nullopt, sim).source, "simulation.sample_interval_ns");
  EXPECT_EQ(resolve_sample_interval(2.5, sim).value, 2500u);
  EXPECT_EQ(resolve_sample_interval(2.5, sim).source, "--sample-interval");
  EXPECT_THROW(resolve_sample_interval(0.0, sim), SettingError);
  EXPECT_THROW(resolve_sample_interval(-1.0, sim), SettingError);
  EXPECT_THROW(resolve_sample_interval(1e-4, sim), SettingError);  // below a picosecond
}

}  // namespace
}  // namespace warpsim::experiment
