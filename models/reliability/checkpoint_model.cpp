// Checkpoint/restart goodput models (see checkpoint_model.hpp).
#include "models/reliability/checkpoint_model.hpp"

#include <algorithm>
#include <cmath>

#include "engine/random.hpp"

namespace warpsim::reliability {

namespace {
constexpr std::uint32_t kFailureStream = 0xfa11ed5u;
}  // namespace

double expected_segment_seconds(const CheckpointParams& p, double interval_s) {
  const double m = p.mtbf_s;
  // expm1 keeps precision when (tau + C) << M, the common case.
  return m * std::exp(p.restart_s / m) * std::expm1((interval_s + p.checkpoint_s) / m);
}

RunOutcome expected_run(const CheckpointParams& p, double interval_s, double work_s) {
  RunOutcome r;
  const double tau = interval_s > 0 ? std::min(interval_s, work_s) : work_s;
  const double segments = work_s / tau;
  r.wall_s = segments * expected_segment_seconds(p, tau);
  // Failures form a Poisson process over all of the wall time.
  r.failures = r.wall_s / p.mtbf_s;
  r.checkpoint_s = segments * p.checkpoint_s;
  // Each failure outside a restart starts a restart phase, which lasts M (e^{R/M} - 1) with its retries
  // and suffers e^{R/M} - 1 failures itself: of all failures a share e^{-R/M} start a phase.
  r.restart_s = -r.failures * p.mtbf_s * std::expm1(-p.restart_s / p.mtbf_s);
  r.lost_work_s = std::max(0.0, r.wall_s - work_s - r.checkpoint_s - r.restart_s);
  return r;
}

double optimal_interval_seconds(const CheckpointParams& p) {
  const auto cost = [&](double log_tau) {
    const double tau = std::exp(log_tau);
    return expected_segment_seconds(p, tau) / tau;
  };
  double lo = std::log(p.mtbf_s * 1e-9), hi = std::log(p.mtbf_s * 10);
  const double phi = (std::sqrt(5.0) - 1) / 2;
  double a = hi - phi * (hi - lo), b = lo + phi * (hi - lo);
  double fa = cost(a), fb = cost(b);
  for (int i = 0; i < 200 && hi - lo > 1e-12; ++i) {
    if (fa < fb) {
      hi = b;
      b = a;
      fb = fa;
      a = hi - phi * (hi - lo);
      fa = cost(a);
    } else {
      lo = a;
      a = b;
      fa = fb;
      b = lo + phi * (hi - lo);
      fb = cost(b);
    }
  }
  return std::exp((lo + hi) / 2);
}

double young_interval_seconds(const CheckpointParams& p) {
  return std::sqrt(2 * p.checkpoint_s * p.mtbf_s);
}

RunOutcome monte_carlo_run(const CheckpointParams& p, double interval_s, double work_s, std::uint64_t seed,
                           std::uint32_t trials) {
  RunOutcome sum;
  const double tau = interval_s > 0 ? interval_s : work_s;
  for (std::uint32_t trial = 0; trial < trials; ++trial) {
    Rng rng(seed, kFailureStream, trial);
    RunOutcome r;
    double t = 0, saved = 0;  // wall clock; work safely checkpointed
    double next_failure = rng.exponential(p.mtbf_s);
    while (saved < work_s) {
      const double segment = std::min(tau, work_s - saved);
      if (t + segment + p.checkpoint_s <= next_failure) {
        t += segment + p.checkpoint_s;
        saved += segment;
        r.checkpoint_s += p.checkpoint_s;
        continue;
      }
      // Failure during this segment or its checkpoint: everything since the last checkpoint is lost.
      r.lost_work_s += next_failure - t;
      t = next_failure;
      r.failures += 1;
      next_failure = t + rng.exponential(p.mtbf_s);
      // The restart itself can be struck and starts over.
      while (t + p.restart_s > next_failure) {
        r.restart_s += next_failure - t;
        t = next_failure;
        r.failures += 1;
        next_failure = t + rng.exponential(p.mtbf_s);
      }
      t += p.restart_s;
      r.restart_s += p.restart_s;
    }
    r.wall_s = t;
    sum.wall_s += r.wall_s;
    sum.failures += r.failures;
    sum.checkpoint_s += r.checkpoint_s;
    sum.restart_s += r.restart_s;
    sum.lost_work_s += r.lost_work_s;
  }
  const double n = std::max<std::uint32_t>(trials, 1);
  sum.wall_s /= n;
  sum.failures /= n;
  sum.checkpoint_s /= n;
  sum.restart_s /= n;
  sum.lost_work_s /= n;
  return sum;
}

}  // namespace warpsim::reliability
