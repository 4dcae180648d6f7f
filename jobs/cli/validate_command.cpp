// `warpsim validate [SET...] --jobs K`: runs validation sets (folders of experiment specs with a
// `validation {}` message: the published TFLOP/s per GPU, its source, the assumptions) as full simulations,
// K rows at a time in child processes, and prints per row the reference, the prediction and the signed
// relative error, then each set's mean absolute error and worst row. --csv writes the rows, --docs rewrites
// the generated tables of docs/validation.md, --set/--scale override spec fields, --perturb NAME=FACTOR
// scales one named model parameter (sensitivity runs, experiment/validation/perturbation.hpp). The
// work is experiment/validation/; this file is the command line and the process pool around it.
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "experiment/spec/job_spec.hpp"
#include "experiment/spec/validation_spec.hpp"
#include "experiment/validation/perturbation.hpp"
#include "experiment/validation/row_evaluation.hpp"
#include "experiment/validation/spec_overrides.hpp"
#include "experiment/validation/validation_report.hpp"
#include "experiment/validation/validation_sets.hpp"
#include "jobs/cli/command_registry.hpp"
#include "jobs/cli/usage_error.hpp"
#include "jobs/sweep/child_process.hpp"

namespace warpsim::cli {

namespace {

namespace v = experiment::validation;
namespace fs = std::filesystem;

struct ValidateFlags {
  std::vector<std::string> sets;
  std::string root = "validation";
  int jobs = 1;
  std::string csv;
  bool overwrite = false;
  std::vector<std::string> rows;
  bool markdown = false;
  std::string docs;
  bool full = false;
  std::vector<std::string> set_overrides;
  std::vector<std::string> scale_overrides;
  std::vector<std::string> perturb;
  double max_abs_error = -1;
  std::string worker;  // internal: evaluate this one row and print its result
};

std::vector<v::Override> overrides(const ValidateFlags& f) {
  std::vector<v::Override> out;
  for (const auto& s : f.set_overrides) out.push_back(v::parse_override(s, v::Override::Kind::kSet));
  for (const auto& s : f.scale_overrides) out.push_back(v::parse_override(s, v::Override::Kind::kScale));
  return out;
}

std::vector<v::Perturbation> perturbations(const ValidateFlags& f) {
  std::vector<v::Perturbation> out;
  for (const auto& s : f.perturb) out.push_back(v::parse_perturbation(s));
  return out;
}

// A row's spec with the overrides, then the perturbations, applied; errors name the file.
spec::ExperimentSpec load_row(const std::string& path, const std::vector<v::Override>& o,
                              const std::vector<v::Perturbation>& p) {
  try {
    return v::apply_perturbations(v::apply_overrides(spec::load_validation_row(path), o), p);
  } catch (const std::invalid_argument& e) {
    throw UsageError("validation row " + path + ": " + e.what());
  }
}

int run_worker(const ValidateFlags& f) {
  const spec::ExperimentSpec row = load_row(f.worker, overrides(f), perturbations(f));
  v::RowOptions options;
  options.full = f.full;
  options.on_simulation = [](const std::string& what) { std::cerr << "simulating " << what << std::endl; };
  v::to_report(v::evaluate_row(row, f.worker, options)).print(std::cout);
  return 0;
}

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream b;
  b << in.rdbuf();
  return b.str();
}

// The child's argv: this binary, evaluating one row with the same overrides.
std::vector<std::string> worker_argv(const ValidateFlags& f, const std::string& row) {
  std::vector<std::string> argv{sweep::running_image(), "--log-level", "warn", "validate", "--worker", row};
  if (f.full) argv.push_back("--full");
  for (const auto& s : f.set_overrides) argv.push_back("--set=" + s);
  for (const auto& s : f.scale_overrides) argv.push_back("--scale=" + s);
  for (const auto& s : f.perturb) argv.push_back("--perturb=" + s);
  return argv;
}

// The command line the docs' blocks name.
std::string command_line(const ValidateFlags& f, const std::string& set_path) {
  std::string c = "warpsim validate " + set_path;
  for (const auto& g : f.rows) c += " --rows '" + g + "'";
  if (f.full) c += " --full";
  for (const auto& s : f.set_overrides) c += " --set " + s;
  for (const auto& s : f.scale_overrides) c += " --scale " + s;
  for (const auto& s : f.perturb) c += " --perturb " + s;
  return c;
}

std::string last_line(const std::string& text) {
  std::string t = text;
  while (!t.empty() && t.back() == '\n') t.pop_back();
  const auto nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

// A rough cost of a row, to start the dearest rows first (the pool's wall time is then closer to the total
// over K): simulated GPUs x layers per GPU x micro-batches, summed over the row's simulations.
double cost_hint(const spec::ExperimentSpec& row, bool full) {
  const auto& job = row.job();
  const auto& p = job.parallelism();
  const double world = static_cast<double>(spec::world_size(job));
  const double layers = static_cast<double>(job.model().num_layers()) / std::max(1u, p.pipeline_parallel());
  const auto& red = row.validation().reduction();
  const bool replica = red.dp_replica() && !full;
  const double sim_world = replica ? world / std::max(1u, p.data_parallel()) : world;
  double m = static_cast<double>(spec::microbatches_per_step(job));
  if (!full && red.microbatch_points_size() == 2) m = red.microbatch_points(0) + red.microbatch_points(1);
  return sim_world * layers * m + (replica ? world * layers : 0);
}

// Runs every row in a child process, `jobs` at a time (dearest first), with progress lines on stderr.
std::vector<v::RowResult> run_rows(const ValidateFlags& f, const std::vector<v::RowFile>& rows,
                                   const std::vector<spec::ExperimentSpec>& specs) {
  const fs::path tmp =
      fs::temp_directory_path() / ("warpsim-validate-" + std::to_string(static_cast<long>(::getpid())));
  fs::create_directories(tmp);
  struct Running {
    std::size_t index;
    std::unique_ptr<sweep::ChildProcess> child;
    std::chrono::steady_clock::time_point start;
  };
  std::vector<v::RowResult> results(rows.size());
  std::vector<Running> running;
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  std::vector<std::size_t> order(rows.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return cost_hint(specs[a], f.full) > cost_hint(specs[b], f.full);
  });
  std::size_t started = 0, done = 0;
  const std::size_t total = rows.size();
  while (done < total) {
    while (started < total && running.size() < static_cast<std::size_t>(f.jobs)) {
      const std::size_t next = order[started++];
      const std::string out = (tmp / (std::to_string(next) + ".out")).string();
      const std::string err = (tmp / (std::to_string(next) + ".err")).string();
      running.push_back({next,
                         std::make_unique<sweep::ChildProcess>(worker_argv(f, rows[next].path), out, err),
                         std::chrono::steady_clock::now()});
      std::cerr << "[" << next + 1 << "/" << total << "] start " << rows[next].id << " ("
                << v::describe_config(specs[next]) << "), elapsed " << seconds(elapsed()) << std::endl;
    }
    bool any = false;
    for (auto it = running.begin(); it != running.end();) {
      const std::optional<int> status = it->child->poll();
      if (!status) {
        ++it;
        continue;
      }
      any = true;
      const std::size_t i = it->index;
      const std::string out = read_text((tmp / (std::to_string(i) + ".out")).string());
      const std::string err = read_text((tmp / (std::to_string(i) + ".err")).string());
      v::RowResult r;
      if (*status == 0) {
        try {
          r = v::parse_row_result(out);
        } catch (const std::exception& e) {
          r.error_text = e.what();
        }
      } else {
        r.error_text = "exit " + std::to_string(*status) + ": " + last_line(err);
      }
      // The set as the parent names it (the folder's canonical name, whatever path the worker was given).
      r.set = rows[i].set;
      r.row = fs::path(rows[i].path).stem().string();
      if (r.failed()) {
        r.name = specs[i].name();
        r.config = v::describe_config(specs[i]);
        r.source = specs[i].validation().source();
        r.reference = specs[i].validation().reference();
      }
      results[i] = r;
      ++done;
      const double row_wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - it->start).count();
      const double eta = elapsed() / static_cast<double>(done) * static_cast<double>(total - done);
      std::cerr << "[" << i + 1 << "/" << total << "] done  " << rows[i].id << ": ";
      if (r.failed()) {
        std::cerr << "FAILED (" << r.error_text << ")";
      } else {
        char buf[128];
        std::snprintf(buf, sizeof buf, "%.1f vs %.1f TFLOP/s per GPU (%s)", r.prediction, r.reference,
                      v::percent(r.error()).c_str());
        std::cerr << buf;
      }
      std::cerr << " in " << seconds(row_wall) << "; " << done << " of " << total << " done, elapsed "
                << seconds(elapsed()) << ", ETA " << seconds(eta) << std::endl;
      it = running.erase(it);
    }
    if (!any) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::error_code ec;
  fs::remove_all(tmp, ec);
  return results;
}

int run_validate(const ValidateFlags& f) {
  if (!f.worker.empty()) return run_worker(f);
  if (f.jobs < 1) throw UsageError("--jobs: must be >= 1 (got " + std::to_string(f.jobs) + ")");
  std::vector<std::string> sets = f.sets;
  if (sets.empty()) {
    sets = v::shipped_sets(f.root);
    if (sets.empty()) {
      throw UsageError("SET: no validation sets under '" + f.root +
                       "' (run from the repository root, give --root or name a SET)");
    }
  }
  const std::vector<v::RowFile> rows = v::list_rows(sets, f.rows);
  if (rows.empty()) throw UsageError("--rows: no row matches");
  const auto o = overrides(f);
  const auto p = perturbations(f);
  std::vector<spec::ExperimentSpec> specs;
  for (const auto& r : rows) specs.push_back(load_row(r.path, o, p));  // every bad row before any simulation
  if (!f.csv.empty() && fs::exists(f.csv) && !f.overwrite) {
    throw UsageError("--csv: '" + f.csv + "' already exists (pass --overwrite to replace it)");
  }
  if (!f.docs.empty()) {
    // The docs hold whole sets: a table of some rows would pass for the set's.
    if (!f.rows.empty()) throw UsageError("--docs: rewrites whole sets' tables; not with --rows");
    if (!fs::is_regular_file(f.docs)) throw UsageError("--docs: '" + f.docs + "' is not a file");
    const std::string doc = read_text(f.docs);
    for (const auto& r : rows) v::rewrite_block(doc, r.set, "");  // every set's block is there
  }
  std::cerr << "warpsim validate: " << rows.size() << " rows, " << f.jobs << " at a time"
            << (f.full ? ", reductions off (--full)" : "") << std::endl;
  for (const auto& s : f.perturb) std::cerr << "perturbed: " << s << std::endl;
  const std::vector<v::RowResult> results = run_rows(f, rows, specs);

  // Per set: the rows, its summary; the set's folder as given names it in the docs' command.
  std::map<std::string, std::vector<v::RowResult>> by_set;
  std::map<std::string, std::string> set_path;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    by_set[rows[i].set].push_back(results[i]);
    set_path.emplace(rows[i].set, fs::path(rows[i].path).parent_path().string());
  }
  v::print_rows(std::cout, results);
  for (const auto& [set, set_rows] : by_set)
    v::print_summary(std::cout, set, v::summarize(set_rows), set_rows);
  if (by_set.size() > 1) v::print_summary(std::cout, "all", v::summarize(results), results);
  if (f.markdown) {
    for (const auto& [set, set_rows] : by_set) {
      std::cout << "\n<!-- validate:begin " << set << " -->\n"
                << v::to_markdown(set_rows, command_line(f, set_path[set])) << "<!-- validate:end " << set
                << " -->\n";
    }
  }
  if (!f.csv.empty()) {
    v::write_file_atomically(f.csv, v::to_csv(results), f.overwrite, "--csv");
    std::cout << "csv: " << f.csv << "\n";
  }
  if (!f.docs.empty()) {
    std::string doc = read_text(f.docs);
    for (const auto& [set, set_rows] : by_set) {
      doc = v::rewrite_block(doc, set, v::to_markdown(set_rows, command_line(f, set_path[set])));
    }
    v::write_file_atomically(f.docs, doc, true, "--docs");
    std::cout << "docs: " << f.docs << " (" << by_set.size() << " blocks rewritten)\n";
  }
  int code = 0;
  for (const auto& r : results) {
    if (r.failed()) {
      code = 1;
    } else if (f.max_abs_error >= 0 && std::abs(r.error()) > f.max_abs_error) {
      std::cout << "out of bound: " << r.set << "/" << r.row << " " << v::percent(r.error())
                << " (--max-abs-error " << f.max_abs_error << ")\n";
      code = 1;
    }
  }
  return code;
}

}  // namespace

std::function<int()> add_validate_command(CLI::App& app, const CommandEnv& env) {
  auto f = std::make_shared<ValidateFlags>();
  CLI::App* cmd = app.add_subcommand(
      "validate",
      "Simulate validation sets (published training runs) and report the error of TFLOP/s per GPU");
  cmd->add_option("SET", f->sets, "set folders (or single row specs); default: every set under --root");
  cmd->add_option("--root", f->root, "where the shipped sets are")->capture_default_str();
  cmd->add_option("--jobs,-j", f->jobs, "rows simulated at once (child processes)")->capture_default_str();
  cmd->add_option("--rows", f->rows, "only rows whose SET/STEM or STEM matches one of these shell globs");
  cmd->add_option("--csv", f->csv, "write the rows as CSV (atomically)");
  cmd->add_flag("--overwrite", f->overwrite, "replace an existing --csv file");
  cmd->add_flag("--markdown", f->markdown,
                "also print each set's Markdown table (as docs/validation.md has it)");
  cmd->add_option(
      "--docs", f->docs,
      "rewrite the <!-- validate:begin SET --> ... <!-- validate:end SET --> blocks of this file");
  cmd->add_flag("--full", f->full, "ignore the rows' reductions: simulate every job whole");
  cmd->add_option("--set", f->set_overrides,
                  "PATH=VALUE: set a spec field in every row (e.g. "
                  "job.compute_model.compute_eff_max=0.72)");
  cmd->add_option(
      "--scale", f->scale_overrides,
      "PATH=FACTOR: multiply a spec field in every row (e.g. cluster.fat_tree.links.bandwidth_gbps=0.9)");
  std::string names;
  for (const auto& p : v::perturbable_parameters())
    names += (names.empty() ? "" : ", ") + std::string(p.name);
  cmd->add_option("--perturb", f->perturb,
                  "NAME=FACTOR: multiply one model parameter in every row (sensitivity; e.g. gemm_eff=1.1). "
                  "NAME: " +
                      names);
  cmd->add_option("--max-abs-error", f->max_abs_error,
                  "exit 1 when a row's |signed relative error| exceeds this fraction (regression tests)");
  cmd->add_option("--worker", f->worker, "internal: evaluate one row in this process and print its result")
      ->group("");
  const int ranks = env.ranks;
  return [f, cmd, ranks]() -> int {
    if (!cmd->parsed()) return -1;
    if (ranks != 1) throw UsageError("validate: runs on one MPI rank (it starts its own processes)");
    return run_validate(*f);
  };
}

const CommandRegistrar kRegisterValidate{"validate", add_validate_command};

}  // namespace warpsim::cli
