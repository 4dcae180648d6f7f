// Parsing, config-file reading and validation of SubmitOptions (see submit_options.hpp).
#include "slurm/submit_options.hpp"

#include <charconv>
#include <fstream>
#include <regex>
#include <stdexcept>

namespace warpsim::slurm {

namespace {

std::int64_t parse_int(std::string_view key, std::string_view value, std::int64_t min, std::int64_t max) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size() || value.empty()) {
    throw std::invalid_argument(std::string(key) + ": expected an integer, got '" + std::string(value) + "'");
  }
  if (v < min || v > max) {
    throw std::invalid_argument(std::string(key) + ": must be within [" + std::to_string(min) + ", " +
                                std::to_string(max) + "], got " + std::to_string(v));
  }
  return v;
}

bool parse_bool(std::string_view key, std::string_view value) {
  if (value == "true" || value == "yes" || value == "1") return true;
  if (value == "false" || value == "no" || value == "0") return false;
  throw std::invalid_argument(std::string(key) + ": expected true or false, got '" + std::string(value) +
                              "'");
}

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r");
  return s.substr(first, last - first + 1);
}

// #SBATCH lines are parsed by sbatch, not by a shell: keep their values to characters that need no quoting.
void check_directive_value(std::string_view key, const std::string& value) {
  for (const char c : value) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) ||
                    std::string_view("-_.,/+:@=%").find(c) != std::string_view::npos;
    if (!ok) {
      throw std::invalid_argument(std::string(key) + ": character '" + std::string(1, c) +
                                  "' not allowed in '" + value + "' (use letters, digits and -_.,/+:@=)");
    }
  }
}

constexpr std::int64_t kMaxCount = 1'000'000;

}  // namespace

std::string_view to_string(Launcher launcher) {
  switch (launcher) {
    case Launcher::kSrunPmix:
      return "srun";
    case Launcher::kMpirun:
      return "mpirun";
    case Launcher::kNone:
      return "none";
  }
  return "?";
}

const std::vector<std::string>& option_keys() {
  static const std::vector<std::string> keys{
      "job-name",  "nodes",   "ntasks-per-node", "cpus-per-task", "time",
      "partition", "account", "output-dir",      "array",         "array-throttle",
      "launcher",  "requeue", "signal-seconds",  "hold",          "checkpoint-dir"};
  return keys;
}

void set_option(SubmitOptions& o, std::string_view key, std::string_view value) {
  const std::string v(value);
  if (key == "job-name") {
    o.job_name = v;
  } else if (key == "nodes") {
    o.nodes = parse_int(key, value, 1, kMaxCount);
  } else if (key == "ntasks-per-node") {
    o.ntasks_per_node = parse_int(key, value, 1, kMaxCount);
  } else if (key == "cpus-per-task") {
    o.cpus_per_task = parse_int(key, value, 1, kMaxCount);
  } else if (key == "time") {
    o.time_limit = v;
  } else if (key == "partition") {
    o.partition = v;
  } else if (key == "account") {
    o.account = v;
  } else if (key == "output-dir") {
    o.output_dir = v;
  } else if (key == "array") {
    o.array_size = parse_int(key, value, 0, kMaxCount);
  } else if (key == "array-throttle") {
    o.array_throttle = parse_int(key, value, 0, kMaxCount);
  } else if (key == "launcher") {
    if (value == "srun") {
      o.launcher = Launcher::kSrunPmix;
    } else if (value == "mpirun") {
      o.launcher = Launcher::kMpirun;
    } else if (value == "none") {
      o.launcher = Launcher::kNone;
    } else {
      throw std::invalid_argument("launcher: expected srun, mpirun or none, got '" + v + "'");
    }
  } else if (key == "requeue") {
    o.requeue = parse_bool(key, value);
  } else if (key == "signal-seconds") {
    o.signal_seconds = parse_int(key, value, 0, 65535);  // Slurm's limit for --signal's time
  } else if (key == "hold") {
    o.hold = parse_bool(key, value);
  } else if (key == "checkpoint-dir") {
    if (v.empty()) throw std::invalid_argument("checkpoint-dir: expected a directory");
    o.checkpoint_dir = v;
  } else {
    std::string known;
    for (const auto& k : option_keys()) known += (known.empty() ? "" : ", ") + k;
    throw std::invalid_argument("unknown Slurm option '" + std::string(key) + "' (known: " + known + ")");
  }
}

void apply_config(SubmitOptions& options, std::istream& in, const std::string& source) {
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::string_view text = trim(std::string_view(line).substr(0, line.find('#')));
    if (text.empty()) continue;
    const auto eq = text.find('=');
    const std::string where = source + ":" + std::to_string(number) + ": ";
    if (eq == std::string_view::npos) throw std::invalid_argument(where + "expected 'key = value'");
    try {
      set_option(options, trim(text.substr(0, eq)), trim(text.substr(eq + 1)));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(where + e.what());
    }
  }
}

void apply_config_file(SubmitOptions& options, const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("--config: cannot read '" + path + "'");
  apply_config(options, in, path);
}

void validate(const SubmitOptions& o) {
  if (o.job_name.empty()) throw std::invalid_argument("job-name: must not be empty");
  check_directive_value("job-name", o.job_name);
  check_directive_value("partition", o.partition);
  check_directive_value("account", o.account);
  if (o.output_dir.empty()) throw std::invalid_argument("output-dir: must not be empty");
  check_directive_value("output-dir", o.output_dir);
  if (o.nodes < 1) throw std::invalid_argument("nodes: must be >= 1");
  if (o.ntasks_per_node < 1) throw std::invalid_argument("ntasks-per-node: must be >= 1");
  if (o.cpus_per_task < 1) throw std::invalid_argument("cpus-per-task: must be >= 1");
  static const std::regex time_re(R"(\d+|\d+:\d{1,2}|\d+:\d{1,2}:\d{1,2}|\d+-\d+(:\d{1,2}(:\d{1,2})?)?)");
  if (!o.time_limit.empty() && !std::regex_match(o.time_limit, time_re)) {
    throw std::invalid_argument(
        "time: '" + o.time_limit +
        "' is not a Slurm time (minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS)");
  }
  if (o.array_size < 0) throw std::invalid_argument("array: must be >= 0");
  if (o.array_throttle < 0) throw std::invalid_argument("array-throttle: must be >= 0");
  if (o.array_throttle > 0 && o.array_size == 0) {
    throw std::invalid_argument("array-throttle: needs array (a job array) to be set");
  }
  if (o.signal_seconds < 0 || o.signal_seconds > 65535) {
    throw std::invalid_argument("signal-seconds: must be within [0, 65535]");
  }
  if (o.launcher == Launcher::kNone && o.nodes * o.ntasks_per_node > 1) {
    throw std::invalid_argument("launcher: 'none' runs one process; use srun or mpirun for " +
                                std::to_string(o.nodes * o.ntasks_per_node) + " tasks");
  }
  if (o.warpsim_binary.empty() || o.warpsim_binary.front() != '/') {
    throw std::invalid_argument("warpsim binary: need an absolute path (got '" + o.warpsim_binary + "')");
  }
  if (o.command.empty()) throw std::invalid_argument("command: no warpsim subcommand given after --");
  bool uses_task = false;
  for (const auto& arg : o.command) {
    if (arg.find('\n') != std::string::npos || arg.find('\0') != std::string::npos) {
      throw std::invalid_argument("command: argument contains a newline or NUL byte");
    }
    uses_task = uses_task || arg.find(kTaskPlaceholder) != std::string::npos;
  }
  if (!o.checkpoint_dir.empty()) {
    // Only these subcommands checkpoint; the script adds both flags itself, so they must not be given twice.
    if (o.command.front() != "run" && o.command.front() != "phold") {
      throw std::invalid_argument(
          "checkpoint-dir: only for `warpsim run` and `warpsim phold` (the command is '" + o.command.front() +
          "')");
    }
    for (const auto& arg : o.command) {
      if (arg == "--checkpoint-dir" || arg == "--resume" || arg.rfind("--checkpoint-dir=", 0) == 0 ||
          arg.rfind("--resume=", 0) == 0) {
        throw std::invalid_argument("command: " + arg.substr(0, arg.find('=')) +
                                    " is set by checkpoint-dir; give the directory only there");
      }
    }
    if (o.checkpoint_dir.find('\n') != std::string::npos)
      throw std::invalid_argument("checkpoint-dir: contains a newline");
    uses_task = uses_task || o.checkpoint_dir.find(kTaskPlaceholder) != std::string::npos;
  }
  if (uses_task && o.array_size == 0) {
    throw std::invalid_argument("command: uses " + std::string(kTaskPlaceholder) +
                                " but array is not set (no array task id to substitute)");
  }
}

}  // namespace warpsim::slurm
