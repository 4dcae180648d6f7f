// `warpsim serve`: the job service (jobs/serve/): listens on loopback unless --bind names another address
// (then a 0600 --token-file is required), runs submitted experiments and sweeps as child processes or
// forwards them to Slurm (--slurm), until SIGINT/SIGTERM. `warpsim client` talks to it: submit an
// experiment or sweep file, status, cancel, list results.
#include <CLI/CLI.hpp>

#include <boost/asio/signal_set.hpp>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "jobs/cli/command_registry.hpp"
#include "jobs/cli/usage_error.hpp"
#include "jobs/serve/client.hpp"
#include "jobs/serve/server.hpp"
#include "jobs/serve/submit_spec.hpp"
#include "jobs/sweep/child_process.hpp"
#include "jobs/sweep/sweep_store.hpp"

namespace warpsim::cli {

namespace {

struct ServeFlags {
  serve::ServerOptions server;
  std::string port_file;
  int port = 0;
};

int run_serve(ServeFlags f, const CommandEnv& env) {
  if (env.ranks != 1) throw UsageError("serve runs as one process; do not start it under mpiexec/srun");
  if (f.port < 0 || f.port > 65535) throw UsageError("--port must be in [0, 65535]");
  if (f.server.jobs.max_running < 1 || f.server.jobs.max_running > 256)
    throw UsageError("--max-running must be in [1, 256]");
  f.server.port = static_cast<std::uint16_t>(f.port);
  f.server.jobs.state_dir = std::filesystem::absolute(f.server.jobs.state_dir).lexically_normal().string();
  f.server.jobs.warpsim_binary = sweep::self_executable();
  boost::asio::io_context io;
  serve::Server server(io, f.server);  // std::invalid_argument (exit 2) for bind/token problems
  const std::string where = f.server.bind_address + ":" + std::to_string(server.port());
  if (!f.port_file.empty()) sweep::write_file_atomically(f.port_file, std::to_string(server.port()) + "\n");
  std::cerr << "warpsim serve: listening on " << where << " (state " << f.server.jobs.state_dir << ", "
            << (f.server.jobs.slurm ? "forwarding to Slurm" : "running jobs locally") << ")\n";
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code&, int) {
    server.stop();
    io.stop();
  });
  io.run();
  std::cerr << "warpsim serve: stopped\n";
  return 0;
}

std::function<int()> add_serve_command(CLI::App& app, const CommandEnv& env) {
  auto f = std::make_shared<ServeFlags>();
  f->server.jobs.state_dir = "warpsim-serve";
  CLI::App* cmd = app.add_subcommand("serve", "Run the job service (length-prefixed protobuf over TCP)");
  cmd->add_option("--bind", f->server.bind_address,
                  "address to listen on; anything but loopback needs --token-file")
      ->capture_default_str();
  cmd->add_option("--port", f->port, "TCP port (0: any free port, printed and written to --port-file)")
      ->capture_default_str();
  cmd->add_option("--port-file", f->port_file, "write the port here once listening");
  cmd->add_option("--token-file", f->server.token_file,
                  "file holding the token clients must send (mode 0600, owned by you)");
  cmd->add_option("--state", f->server.jobs.state_dir, "folder for submitted specs and job outputs")
      ->capture_default_str();
  cmd->add_option("--max-running", f->server.jobs.max_running, "local jobs at once (the rest queue)")
      ->capture_default_str();
  cmd->add_option("--max-message-bytes", f->server.max_message_bytes, "largest request accepted")
      ->capture_default_str();
  cmd->add_flag("--slurm", f->server.jobs.slurm, "forward jobs to Slurm instead of running them here");
  cmd->add_option("--partition", f->server.jobs.slurm_partition, "with --slurm: partition");
  cmd->add_option("--time", f->server.jobs.slurm_time, "with --slurm: time limit (Slurm syntax)");
  cmd->add_option("--account", f->server.jobs.slurm_account, "with --slurm: account");
  return [f, cmd, env]() -> int {
    if (!cmd->parsed()) return -1;
    return run_serve(*f, env);
  };
}

struct ClientFlags {
  std::string host = "127.0.0.1";
  int port = 0;
  std::string token_file;
  std::string action;
  std::string argument;
  std::uint32_t jobs = 0;
  double timeout_s = 30;  // serve::kDefaultClientTimeout
};

// `warpsim client` exit codes: 0 ok, 1 refused by the service (or no connection), 2 bad input (usage),
// 124 no answer within --timeout-s (the code timeout(1) uses).
constexpr int kClientTimeoutExitCode = 124;

void print_reply(const spec::ServiceReply& reply) {
  std::cout << "ok: " << (reply.ok() ? "true" : "false") << '\n';
  if (!reply.ok()) std::cout << "error: " << reply.error() << '\n';
  for (const auto& j : reply.jobs()) {
    std::cout << "job: " << j.id() << " kind=" << j.kind() << " state=" << j.state()
              << " exit=" << j.exit_code();
    if (!j.slurm_job_id().empty()) std::cout << " slurm=" << j.slurm_job_id();
    if (!j.output().empty()) std::cout << " output=" << j.output();
    std::cout << '\n';
  }
  for (const auto& r : reply.results()) {
    std::cout << "result: " << r.job_id() << ' ' << r.experiment() << ' ' << r.status();
    for (const auto& key : sweep::index_metric_keys()) {
      if (const auto it = r.values().find(key); it != r.values().end()) {
        std::string name = key;
        for (char& c : name) c = c == ' ' ? '_' : c;
        std::cout << ' ' << name << '=' << it->second;
      }
    }
    std::cout << '\n';
  }
}

int run_client(const ClientFlags& f) {
  if (f.port <= 0 || f.port > 65535) throw UsageError("--port must be in [1, 65535]");
  if (!(f.timeout_s > 0 && f.timeout_s <= 86400))
    throw UsageError("--timeout-s must be more than 0 and at most 86400 seconds");
  spec::ServiceRequest request;
  if (!f.token_file.empty()) request.set_token(serve::read_token_file(f.token_file));
  const auto need_argument = [&](const std::string& what) {
    if (f.argument.empty()) throw UsageError(f.action + ": needs " + what);
  };
  if (f.action == "submit-experiment" || f.action == "submit-sweep") {
    need_argument("a spec file");
    // The service reads no files a client names: base_file, cluster_file and job_file are read here and
    // sent inline.
    std::string text;
    try {
      text = f.action == "submit-experiment" ? serve::self_contained_experiment_text(f.argument)
                                             : serve::self_contained_sweep_text(f.argument);
    } catch (const std::exception& e) {
      throw UsageError(f.action + ": " + e.what());
    }
    auto& submit = *request.mutable_submit();
    if (f.action == "submit-experiment") {
      submit.set_experiment(text);
    } else {
      submit.set_sweep(text);
    }
    submit.set_jobs(f.jobs);
  } else if (f.action == "status") {
    request.mutable_status()->set_id(f.argument);
  } else if (f.action == "cancel") {
    need_argument("a job id");
    request.mutable_cancel()->set_id(f.argument);
  } else if (f.action == "list") {
    request.mutable_list_results();
  } else {
    throw UsageError("action: '" + f.action +
                     "' is not one of submit-experiment, submit-sweep, status, cancel, list");
  }
  try {
    serve::Client client(f.host, static_cast<std::uint16_t>(f.port),
                         std::chrono::duration<double>(f.timeout_s));
    const auto reply = client.call(request);
    print_reply(reply);
    return reply.ok() ? 0 : 1;
  } catch (const serve::TimeoutError& e) {
    std::cerr << "warpsim: error: " << e.what()
              << "; is the service stuck? (raise --timeout-s to wait longer)\n";
    return kClientTimeoutExitCode;
  } catch (const std::runtime_error& e) {
    std::cerr << "warpsim: error: " << e.what() << '\n';
    return 1;
  }
}

std::function<int()> add_client_command(CLI::App& app, const CommandEnv&) {
  auto f = std::make_shared<ClientFlags>();
  CLI::App* cmd = app.add_subcommand(
      "client",
      "Talk to `warpsim serve`: submit-experiment FILE | submit-sweep FILE | status [ID] | cancel ID | list");
  cmd->add_option("action", f->action, "submit-experiment, submit-sweep, status, cancel or list")->required();
  cmd->add_option("argument", f->argument, "spec file (submit-*) or job id (status, cancel)");
  cmd->add_option("--host", f->host, "service address")->capture_default_str();
  cmd->add_option("--port", f->port, "service port")->required();
  cmd->add_option("--token-file", f->token_file, "token to send (mode 0600)");
  cmd->add_option("--jobs", f->jobs, "submit-sweep: experiments at once");
  cmd->add_option("--timeout-s", f->timeout_s,
                  "give up (exit 124) if connecting, or a request and its reply, take longer than this")
      ->capture_default_str();
  return [f, cmd]() -> int {
    if (!cmd->parsed()) return -1;
    return run_client(*f);
  };
}

const CommandRegistrar kRegisterServe{"serve", add_serve_command};
const CommandRegistrar kRegisterClient{"client", add_client_command};

}  // namespace

}  // namespace warpsim::cli
