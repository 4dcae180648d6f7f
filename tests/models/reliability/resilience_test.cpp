// The resilience model (models/reliability/resilience_model.hpp) on the engine:
//  - ResilienceModel.*: sequential runs against the analytic model (Daly) and closed forms: the measured
//    goodput, failure count, lost work, restart and checkpoint time over 8 x 200 simulated days agree with
//    checkpoint_model's expected_run within 5%; without failures the goodput is exactly K T / (K T + C);
//    the horizon splits exactly into useful work, checkpoints, restarts, lost work and the unfinished part.
//  - ResilienceOracle.*: on every rank of MPI_COMM_WORLD (optimistic and conservative, block and
//    round-robin) the same outcome, committed events, state digest and failure table as the sequential run
//    on MPI_COMM_SELF, with correlated repeats.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "experiment/resilience_run.hpp"
#include "models/reliability/checkpoint_model.hpp"
#include "models/reliability/resilience_model.hpp"

namespace warpsim::reliability {
namespace {

constexpr double kHour = 3600;
constexpr double kDay = 24 * kHour;

// 375 domains of one component with MTBF 1125 h: system MTBF 3 h. T = 60 s, K = 30 (K T = 30 min),
// C = 60 s, R = 600 s.
ResilienceParams daly_case(double days) {
  ResilienceParams p;
  p.horizon_s = days * kDay;
  p.step_s = 60;
  p.interval_steps = 30;
  p.checkpoint_s = 60;
  p.restart_s = 600;
  p.groups.push_back({"node", 375, {{Component::kGpu, 1, 1125 * kHour}}, false});
  return p;
}

experiment::ResilienceRun run(const ResilienceParams& p, SyncMode sync, std::uint64_t seed, MPI_Comm comm,
                              const std::string& partition = "block", bool record = false) {
  EngineConfig config;
  config.sync = sync;
  config.seed = seed;
  config.progress_seconds = 0;
  return experiment::run_resilience(p, config, partition, comm, record);
}

double seconds(SimTime ps) {
  return to_seconds(ps);
}

TEST(ResilienceModel, AgreesWithTheAnalyticModelOverManyDays) {
  const ResilienceParams p = daly_case(200);
  CheckpointParams cp;
  cp.mtbf_s = 1 / p.system_rate_per_s();
  cp.checkpoint_s = p.checkpoint_s;
  cp.restart_s = p.restart_s;
  ASSERT_NEAR(cp.mtbf_s, 3 * kHour, 1e-6);
  const double tau = p.step_s * p.interval_steps;
  // Eight independent 200-day runs (seeds 1..8): about 12,800 failures, so the Poisson count's own
  // spread (0.9%) is well inside the 5% tolerance.
  double failures = 0, lost = 0, restart = 0, checkpoint = 0, useful = 0, elapsed = 0, horizon = 0;
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    const auto r = run(p, SyncMode::kSequential, seed, MPI_COMM_SELF);
    const ResilienceOutcome& o = r.outcome;
    failures += static_cast<double>(o.failures);
    lost += seconds(o.lost_ps);
    restart += seconds(o.restart_ps);
    checkpoint += seconds(o.checkpoint_ps);
    useful += seconds(o.useful_ps);
    elapsed += seconds(o.last_checkpoint_end_ps);
    horizon += seconds(o.horizon_ps);
  }
  const double goodput = useful / elapsed;
  const double analytic_goodput = tau / expected_segment_seconds(cp, tau);
  const RunOutcome a = expected_run(cp, tau, analytic_goodput * horizon);  // the same wall time
  std::printf(
      "resilience vs analytic over %.0f days: goodput %.5f / %.5f, failures %.0f / %.1f, lost work %.1f h / "
      "%.1f h, restart %.1f h / %.1f h, checkpoint %.1f h / %.1f h\n",
      horizon / kDay, goodput, analytic_goodput, failures, a.failures, lost / kHour, a.lost_work_s / kHour,
      restart / kHour, a.restart_s / kHour, checkpoint / kHour, a.checkpoint_s / kHour);
  const double tolerance = 0.05;
  EXPECT_NEAR(goodput / analytic_goodput, 1, tolerance);
  EXPECT_NEAR(failures / a.failures, 1, tolerance);
  EXPECT_NEAR(lost / a.lost_work_s, 1, tolerance);
  EXPECT_NEAR(restart / a.restart_s, 1, tolerance);
  EXPECT_NEAR(checkpoint / a.checkpoint_s, 1, tolerance);
}

TEST(ResilienceModel, WithoutFailuresGoodputIsExactlyTheCheckpointShare) {
  ResilienceParams p = daly_case(10.3);
  p.groups.clear();  // no failure domains at all
  const auto r = run(p, SyncMode::kSequential, 1, MPI_COMM_SELF);
  const ResilienceOutcome& o = r.outcome;
  const double kt = p.step_s * p.interval_steps;
  EXPECT_EQ(o.failures, 0u);
  EXPECT_EQ(o.lost_ps, 0u);
  EXPECT_EQ(o.restart_ps, 0u);
  EXPECT_GT(o.saved_steps, 0u);
  EXPECT_EQ(o.goodput(), kt / (kt + p.checkpoint_s));
  // Every segment took K T + C: the last checkpoint ends at a multiple of it.
  EXPECT_EQ(o.last_checkpoint_end_ps, o.saved_steps / p.interval_steps * to_ps(kt + p.checkpoint_s));
}

TEST(ResilienceModel, TheHorizonSplitsExactlyIntoItsParts) {
  ResilienceParams p = daly_case(30);
  p.repeat_probability = 0.5;
  p.repeat_window_s = 2 * kHour;
  p.groups[0].repeats = true;
  const auto r = run(p, SyncMode::kSequential, 3, MPI_COMM_SELF, "block", true);
  const ResilienceOutcome& o = r.outcome;
  EXPECT_GT(o.failures, 100u);
  EXPECT_GT(o.repeats, 0u);
  EXPECT_GT(o.failures_in_phase[1] + o.failures_in_phase[2], 0u);  // some struck checkpoints or restarts
  EXPECT_EQ(o.useful_ps + o.checkpoint_ps + o.restart_ps + o.lost_ps + o.wait_ps + o.in_flight_ps,
            o.horizon_ps);
  // The failure table holds every failure the job saw, in time order; progress never passes the steps run.
  ASSERT_EQ(r.failures.size(), o.failures);
  for (std::size_t i = 1; i < r.failures.size(); ++i) EXPECT_LE(r.failures[i - 1].time, r.failures[i].time);
  ASSERT_FALSE(r.progress.empty());
  EXPECT_EQ(r.progress.back().saved_steps, o.saved_steps);
  for (const auto& row : r.progress) EXPECT_LE(row.saved_steps, row.steps);
  // Rows only at changes of phase: while working, progress grows by one step every T in between.
  const SimTime t = to_ps(p.step_s);
  for (std::size_t i = 0; i + 1 < r.progress.size(); ++i) {
    const ProgressRow& a = r.progress[i];
    const ProgressRow& b = r.progress[i + 1];
    EXPECT_LE(a.time, b.time);
    if (a.time == b.time) continue;  // a failure's two rows: what it found, what is left
    if (a.phase == Phase::kWorking) {
      EXPECT_EQ(b.steps - a.steps, (b.time - a.time) / t) << "row " << i;
    } else {
      EXPECT_GE(b.steps, a.steps) << "row " << i;  // no step while checkpointing, restarting or waiting
    }
  }
  EXPECT_LT(r.progress.size(), 4 * (o.saved_steps / p.interval_steps + o.failures) + 4);
}

// The scale the model is for: a simulated day of a 16,384-GPU job (2048 node domains of 8 GPUs, 8 NICs and
// the host, 2048 switches) at the per-component MTBFs derived from the Llama 3 study
// (examples/reliability/failures-llama3-rates-64xh100.textproto) with a 1 s step: the events are one per
// step and checkpoint plus a few per failure, so the day costs about as much as its 86,400 steps.
TEST(ResilienceModel, SixteenThousandGpuDayIsOneEventPerStep) {
  ResilienceParams p;
  p.horizon_s = kDay;
  p.step_s = 1;
  p.interval_steps = 1800;
  p.checkpoint_s = 30;
  p.restart_s = 600;
  p.groups.push_back({"node",
                      2048,
                      {{Component::kGpu, 8, 79230 * kHour},
                       {Component::kNic, 8, 3033381 * kHour},
                       {Component::kNode, 1, 24351 * kHour}},
                      false});
  p.groups.push_back({"switch", 2048, {{Component::kSwitch, 1, 75835 * kHour}}, false});
  EXPECT_NEAR(1 / p.system_rate_per_s() / kHour, 1296.0 / 419, 0.01);  // 3.09 h, as reported
  const auto r = run(p, SyncMode::kSequential, 1, MPI_COMM_SELF);
  const ResilienceOutcome& o = r.outcome;
  std::printf("16k-GPU day: %llu failures, %llu steps run, %llu events committed, %.3f s wall\n",
              static_cast<unsigned long long>(o.failures), static_cast<unsigned long long>(o.steps_run),
              static_cast<unsigned long long>(r.run.total.committed), r.run.wall_seconds);
  EXPECT_GT(o.failures, 0u);
  // Steps + checkpoints + restarts + (a next-failure draw and a failure message per failure) + the stale
  // events a failure leaves: at most one of each per failure.
  const std::uint64_t checkpoints = o.saved_steps / p.interval_steps + o.failures;
  EXPECT_LE(r.run.total.committed, o.steps_run + checkpoints + 4 * o.failures);
}

// Correlated repeats: each failure of a repeating domain repeats with probability p, so repeats / primary
// failures -> p / (1 - p).
TEST(ResilienceModel, CorrelatedRepeatsAddFailures) {
  ResilienceParams p = daly_case(100);
  p.groups[0].repeats = true;
  p.repeat_probability = 0.3;
  p.repeat_window_s = 1 * kHour;
  const auto r = run(p, SyncMode::kSequential, 5, MPI_COMM_SELF);
  const double primaries = static_cast<double>(r.outcome.failures - r.outcome.repeats);
  EXPECT_NEAR(static_cast<double>(r.outcome.repeats) / primaries, 0.3 / 0.7, 0.05);
}

// Reverse computation of the job timeline, driven without an engine: a random sequence of its own events
// and injected failures (in every phase, and stale events after them) is run forward, then reversed newest
// first; before each event's reverse the state's digest must be what it was before its forward.
class Capture final : public EventScheduler {
 public:
  struct Sent {
    SimTime time;
    std::uint16_t kind;
    ResiliencePayload payload;
  };
  void schedule(LpId, SimTime delay, std::uint16_t kind, const void* payload, std::size_t bytes) override {
    Sent s{now + delay, kind, {}};
    std::memcpy(&s.payload, payload, bytes);
    sent.push_back(s);
  }
  SimTime now = 0;
  std::vector<Sent> sent;
};

TEST(ResilienceModel, TimelineReverseRestoresEveryState) {
  ResilienceParams p = daly_case(1);
  p.step_s = 10;
  p.interval_steps = 3;
  p.checkpoint_s = 7;
  p.restart_s = 25;
  p.spare_nodes = 1;  // failed nodes come back after 60 s; a restart waits while two are out
  p.repair_s = 60;
  JobTimelineLp lp(p, false);
  const std::uint32_t slot = lp.add_lp(0);
  Capture capture;
  LpContext ctx(capture, sizeof(ResiliencePayload));
  ResiliencePayload buffer;
  ctx.bind(0, 0, EventKey{0, 0, 0}, 0, reinterpret_cast<std::byte*>(&buffer), 1);
  lp.init(slot, ctx);
  Rng rng(7, 1, 2);
  struct Done {
    SimTime time;
    std::uint16_t kind;
    ResiliencePayload payload;
    std::uint64_t digest_before;
  };
  std::vector<Done> history;
  std::uint64_t failures = 0, stale = 0;
  for (std::uint64_t n = 0; n < 5000; ++n) {
    auto next = std::min_element(capture.sent.begin(), capture.sent.end(),
                                 [](const auto& a, const auto& b) { return a.time < b.time; });
    ASSERT_NE(next, capture.sent.end());
    Capture::Sent e = *next;
    if (rng.uniform() < 0.08) {  // a failure strikes before the LP's next event
      e.time =
          capture.now + static_cast<SimTime>(rng.uniform() * static_cast<double>(next->time - capture.now));
      e.kind = kFailure;
      e.payload = {};
      e.payload.component = static_cast<std::uint8_t>(Component::kGpu);
      e.payload.repeat = rng.uniform() < 0.5;
      ++failures;
    } else {
      capture.sent.erase(next);
    }
    capture.now = e.time;
    const std::uint64_t before = lp.digest(slot);
    ctx.bind(0, e.time, EventKey{e.time, n, 0}, e.kind, reinterpret_cast<std::byte*>(&e.payload), 1);
    lp.forward(slot, ctx);
    stale += e.payload.applied == 0;
    history.push_back({e.time, e.kind, e.payload, before});
  }
  EXPECT_GT(failures, 100u);
  EXPECT_GT(stale, 10u);
  EXPECT_GT(lp.state(slot).failures_in_phase[1], 0u);  // failures struck checkpoints
  EXPECT_GT(lp.state(slot).failures_in_phase[2], 0u);  // and restarts
  EXPECT_GT(lp.state(slot).waits, 0u);                 // restarts waited for repairs
  EXPECT_GT(lp.state(slot).failures_in_phase[3], 0u);  // and failures struck while waiting
  for (auto it = history.rbegin(); it != history.rend(); ++it) {
    ctx.bind(0, it->time, EventKey{it->time, 0, 0}, it->kind, reinterpret_cast<std::byte*>(&it->payload), 1);
    lp.reverse(slot, ctx);
    ASSERT_EQ(lp.digest(slot), it->digest_before) << "event " << (history.rend() - it - 1);
  }
  const JobTimelineState& s = lp.state(slot);
  EXPECT_EQ(s.failures, 0u);
  EXPECT_EQ(s.failures_in_phase[0] + s.failures_in_phase[1] + s.failures_in_phase[2], 0u);
  EXPECT_EQ(s.lost_ps + s.restart_ps + s.checkpoint_ps + s.wait_ps + s.waits + s.in_repair + s.saved_steps +
                s.steps_run,
            0u);
}

// The spare pool: with as many spares as failures, no restart waits and the run is the one without repairs;
// with no spares and 8 h repairs, restarts wait, and the horizon still splits exactly.
TEST(ResilienceModel, RestartsWaitForRepairsOnlyWhenSparesRunShort) {
  ResilienceParams p = daly_case(30);
  const auto plain = run(p, SyncMode::kSequential, 4, MPI_COMM_SELF);
  p.repair_s = 8 * kHour;
  p.spare_nodes = 1000;
  const auto plenty = run(p, SyncMode::kSequential, 4, MPI_COMM_SELF);
  EXPECT_EQ(plenty.outcome.waits, 0u);
  EXPECT_EQ(plenty.outcome.failures, plain.outcome.failures);
  EXPECT_EQ(plenty.outcome.useful_ps, plain.outcome.useful_ps);
  EXPECT_EQ(plenty.outcome.lost_ps, plain.outcome.lost_ps);
  EXPECT_EQ(plenty.outcome.restart_ps, plain.outcome.restart_ps);
  p.spare_nodes = 0;
  const auto none = run(p, SyncMode::kSequential, 4, MPI_COMM_SELF);
  const ResilienceOutcome& o = none.outcome;
  // Every restart waits (R = 10 min < 8 h repair), and failures of other nodes while waiting extend it.
  EXPECT_EQ(o.waits, o.failures - o.failures_in_phase[2] - o.failures_in_phase[3]);
  EXPECT_GT(o.wait_ps, 0u);
  EXPECT_LT(o.goodput(), plain.outcome.goodput());
  EXPECT_EQ(o.useful_ps + o.checkpoint_ps + o.restart_ps + o.lost_ps + o.wait_ps + o.in_flight_ps,
            o.horizon_ps);
  std::printf(
      "spare pool, 30 days: goodput %.4f with 1000 spares, %.4f with none (%llu waits, %.1f h waiting)\n",
      plenty.outcome.goodput(), o.goodput(), static_cast<unsigned long long>(o.waits),
      seconds(o.wait_ps) / kHour);
}

struct Variant {
  SyncMode sync;
  std::string partition;
};

TEST(ResilienceOracle, EveryModeAndRankCountMatchesTheSequentialRun) {
  ResilienceParams p;
  p.horizon_s = 20 * kDay;
  p.step_s = 7.5;
  p.interval_steps = 40;
  p.checkpoint_s = 25;
  p.restart_s = 420;
  p.repeat_probability = 0.4;
  p.repeat_window_s = 3 * kHour;
  p.spare_nodes = 1;
  p.repair_s = 6 * kHour;
  p.groups.push_back({"node",
                      64,
                      {{Component::kGpu, 8, 5000 * kHour},
                       {Component::kNode, 1, 3000 * kHour},
                       {Component::kNic, 8, 50000 * kHour}},
                      true});
  p.groups.push_back({"switch", 24, {{Component::kSwitch, 1, 2000 * kHour}}, false});
  const auto ref = run(p, SyncMode::kSequential, 11, MPI_COMM_SELF, "block", true);
  ASSERT_GT(ref.outcome.failures, 20u);
  ASSERT_GT(ref.outcome.repeats, 0u);
  ASSERT_GT(ref.outcome.waits, 0u);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (const Variant& v :
       {Variant{SyncMode::kOptimistic, "block"}, Variant{SyncMode::kOptimistic, "round-robin"},
        Variant{SyncMode::kConservative, "block"}}) {
    SCOPED_TRACE(std::string(to_string(v.sync)) + " " + v.partition);
    const auto got = run(p, v.sync, 11, MPI_COMM_WORLD, v.partition, true);
    EXPECT_EQ(got.run.state_digest, ref.run.state_digest);
    EXPECT_EQ(got.run.total.committed, ref.run.total.committed);
    EXPECT_EQ(got.outcome.failures, ref.outcome.failures);
    EXPECT_EQ(got.outcome.useful_ps, ref.outcome.useful_ps);
    EXPECT_EQ(got.outcome.lost_ps, ref.outcome.lost_ps);
    EXPECT_EQ(got.outcome.restart_ps, ref.outcome.restart_ps);
    EXPECT_EQ(got.outcome.checkpoint_ps, ref.outcome.checkpoint_ps);
    EXPECT_EQ(got.outcome.last_checkpoint_end_ps, ref.outcome.last_checkpoint_end_ps);
    EXPECT_EQ(got.outcome.wait_ps, ref.outcome.wait_ps);
    if (rank == 0) {
      ASSERT_EQ(got.failures.size(), ref.failures.size());
      for (std::size_t i = 0; i < got.failures.size(); ++i) {
        EXPECT_EQ(got.failures[i].time, ref.failures[i].time);
        EXPECT_EQ(got.failures[i].index, ref.failures[i].index);
        EXPECT_EQ(got.failures[i].component, ref.failures[i].component);
      }
      EXPECT_EQ(got.progress.size(), ref.progress.size());
      std::printf("%s %s on %d ranks: %llu events, %llu rolled back, %llu failures\n",
                  std::string(to_string(v.sync)).c_str(), v.partition.c_str(), got.run.ranks,
                  static_cast<unsigned long long>(got.run.total.committed),
                  static_cast<unsigned long long>(got.run.total.rolled_back),
                  static_cast<unsigned long long>(got.outcome.failures));
    }
  }
}

}  // namespace
}  // namespace warpsim::reliability
