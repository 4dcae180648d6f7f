// Local and per-task sweep execution (see sweep_runner.hpp).
#include "jobs/sweep/sweep_runner.hpp"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <list>
#include <optional>
#include <ostream>
#include <sstream>
#include <thread>

#include "jobs/sweep/child_process.hpp"

namespace warpsim::sweep {

namespace {

volatile std::sig_atomic_t g_stop_signal = 0;

void on_stop_signal(int sig) {
  g_stop_signal = sig;
}

// Installs the stop handlers for the runner's lifetime and restores the previous ones after.
class StopSignals {
 public:
  StopSignals() {
    g_stop_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

std::string tail(const std::string& path, std::size_t bytes) {
  std::string text;
  try {
    text = read_text_file(path);
  } catch (const std::exception&) {
    return {};
  }
  return text.size() > bytes ? text.substr(text.size() - bytes) : text;
}

// Stores what a finished child left behind and removes its partial output.
void finish(const SweepStore& store, const std::string& id, int code) {
  std::string summary;
  try {
    summary = read_text_file(store.partial_path(id));
  } catch (const std::exception&) {
  }
  store.record(id, code, summary, tail(store.log_path(id), 2000));
  std::error_code ec;
  std::filesystem::remove(store.partial_path(id), ec);
}

std::string format_seconds(double s) {
  char buf[32];
  if (s < 120) {
    std::snprintf(buf, sizeof buf, "%.0f s", s);
  } else {
    std::snprintf(buf, sizeof buf, "%.0fm%02.0fs", std::floor(s / 60), std::fmod(s, 60));
  }
  return buf;
}

// `sweep [#####-----] 5/16 done, 1 failed, 2 running, 12 s, eta 30 s`: redrawn in place on a terminal,
// one line per change otherwise (logs stay readable).
class Progress {
 public:
  Progress(std::ostream& out, bool enabled, std::size_t total)
      : out_(out),
        enabled_(enabled),
        tty_(isatty(STDERR_FILENO) != 0),
        total_(total),
        start_(std::chrono::steady_clock::now()) {}

  void show(std::size_t finished, std::size_t failed, std::size_t running, std::size_t ran) {
    if (!enabled_) return;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    constexpr int kWidth = 24;
    const int filled = total_ == 0 ? kWidth : static_cast<int>(kWidth * finished / total_);
    std::ostringstream line;
    line << "sweep [" << std::string(filled, '#') << std::string(kWidth - filled, '-') << "] " << finished
         << "/" << total_ << " done, " << failed << " failed, " << running << " running, "
         << format_seconds(elapsed);
    if (ran > 0 && finished < total_) {
      const double per = elapsed / static_cast<double>(ran);
      line << ", eta " << format_seconds(per * static_cast<double>(total_ - finished));
    }
    if (tty_) {
      out_ << '\r' << line.str() << "\x1b[K" << std::flush;
    } else {
      out_ << line.str() << '\n' << std::flush;
    }
  }
  void end() {
    if (enabled_ && tty_) out_ << '\n' << std::flush;
  }

 private:
  std::ostream& out_;
  bool enabled_;
  bool tty_;
  std::size_t total_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

std::vector<std::string> run_command(const SweepStore& store, const ManifestEntry& entry,
                                     const RunnerOptions& options) {
  std::vector<std::string> argv{options.warpsim_binary.empty() ? running_image() : options.warpsim_binary,
                                "--log-level",
                                "warn",
                                "run",
                                store.experiment_path(entry.id),
                                "--progress-seconds",
                                "0"};
  // Each experiment's HDF5 results file (meta, summary, time series) next to its summary.
  if (options.hdf5) argv.insert(argv.end(), {"--output", store.h5_path(entry.id), "--overwrite"});
  argv.insert(argv.end(), options.run_flags.begin(), options.run_flags.end());
  return argv;
}

RunnerResult run_local(const SweepStore& store, const std::vector<ManifestEntry>& manifest,
                       const RunnerOptions& options, std::ostream& progress_out) {
  const StopSignals signals;
  RunnerResult result;
  result.total = manifest.size();
  std::deque<const ManifestEntry*> todo;
  for (const auto& e : manifest) {
    if (store.is_done(e.id)) {
      ++result.skipped;
    } else {
      todo.push_back(&e);
    }
  }
  struct Running {
    const ManifestEntry* entry;
    ChildProcess child;
  };
  std::list<Running> running;  // list: a ChildProcess is not movable into place
  auto running_ids = [&] {
    std::vector<std::string> ids;
    for (const auto& r : running) ids.push_back(r.entry->id);
    return ids;
  };
  Progress progress(progress_out, options.progress, result.total);
  std::size_t finished = result.skipped;
  std::size_t shown = finished;
  store.write_index(manifest);
  progress.show(finished, 0, 0, 0);
  const auto jobs = static_cast<std::size_t>(std::max(1, options.jobs));
  while ((!todo.empty() || !running.empty()) && g_stop_signal == 0) {
    bool changed = false;
    while (!todo.empty() && running.size() < jobs) {
      const ManifestEntry* e = todo.front();
      todo.pop_front();
      running.emplace_back(Running{e, ChildProcess(run_command(store, *e, options), store.partial_path(e->id),
                                                   store.log_path(e->id))});
      changed = true;
    }
    for (auto it = running.begin(); it != running.end();) {
      if (const auto code = it->child.poll()) {
        finish(store, it->entry->id, *code);
        ++result.ran;
        ++finished;
        if (*code != 0) ++result.failed;
        it = running.erase(it);
        changed = true;
      } else {
        ++it;
      }
    }
    if (changed) {
      store.write_index(manifest, running_ids());
      // A terminal line is redrawn on every change; a log gets one line per finished experiment.
      if (finished != shown) progress.show(finished, result.failed, running.size(), result.ran);
      shown = finished;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  if (g_stop_signal != 0) {
    result.interrupted = true;
    for (auto& r : running) {
      r.child.stop();
      std::error_code ec;
      std::filesystem::remove(store.partial_path(r.entry->id), ec);
    }
    running.clear();
  }
  store.write_index(manifest);
  progress.end();
  return result;
}

int run_one(const SweepStore& store, const std::vector<ManifestEntry>& manifest, std::size_t index,
            const RunnerOptions& options) {
  const ManifestEntry& e = manifest.at(index);
  if (store.is_done(e.id)) {
    store.write_index(manifest);
    return 0;
  }
  const StopSignals signals;
  ChildProcess child(run_command(store, e, options), store.partial_path(e.id), store.log_path(e.id));
  std::optional<int> code;
  while (!(code = child.poll())) {
    if (g_stop_signal != 0) {
      // Slurm preempting or cancelling the task: leave the experiment pending for the requeued task.
      child.stop();
      std::error_code ec;
      std::filesystem::remove(store.partial_path(e.id), ec);
      return 128 + static_cast<int>(g_stop_signal);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  finish(store, e.id, *code);
  store.write_index(manifest);
  return *code;
}

}  // namespace warpsim::sweep
