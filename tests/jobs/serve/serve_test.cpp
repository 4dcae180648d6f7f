// `warpsim serve` end to end on loopback: a Server on its own io_context thread, a real child `warpsim run`
// per job (WARPSIM_BINARY), and blocking clients. Covers submit/status/cancel round trips, refused requests
// (malformed, oversized, unauthenticated, invalid) after which the service keeps serving, the token file
// rules, and 1,000 status requests from 8 concurrent clients.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include "jobs/serve/client.hpp"
#include "jobs/serve/framing.hpp"
#include "jobs/serve/server.hpp"
#include "jobs/serve/submit_spec.hpp"

namespace warpsim::serve {
namespace {

namespace fs = std::filesystem;

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class ServeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("warpsim-serve-test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (server_) {
      boost::asio::post(io_, [this] { server_->stop(); });
      io_.stop();
    }
    if (thread_.joinable()) thread_.join();
    server_.reset();
    if (!HasFailure()) fs::remove_all(dir_);
  }
  void start(ServerOptions o = {}) {
    const char* binary = std::getenv("WARPSIM_BINARY");
    ASSERT_NE(binary, nullptr) << "WARPSIM_BINARY must name the warpsim binary (CTest sets it)";
    o.jobs.state_dir = (dir_ / "state").string();
    o.jobs.warpsim_binary = binary;
    server_ = std::make_unique<Server>(io_, o);
    port_ = server_->port();
    thread_ = std::thread([this] { io_.run(); });
  }
  // Stops the server as the service does on SIGTERM (its children stop with it) and drains its handlers, so
  // start() can run a new one on the same state folder.
  void stop_server() {
    boost::asio::post(io_, [this] { server_->stop(); });
    thread_.join();  // run() returns once the stopped server has no work left
    server_.reset();
    io_.restart();
  }
  std::string token_file(const std::string& token, fs::perms perms) {
    const std::string path = (dir_ / "token").string();
    std::ofstream(path) << token << '\n';
    fs::permissions(path, perms);
    return path;
  }
  static spec::ServiceRequest status_request(const std::string& id = "") {
    spec::ServiceRequest r;
    r.mutable_status()->set_id(id);
    return r;
  }
  // Polls status until the job leaves queued/running (bounded).
  static spec::JobStatus wait_done(Client& c, const std::string& id) {
    spec::JobStatus last;
    for (int i = 0; i < 600; ++i) {
      const auto reply = c.call(status_request(id));
      EXPECT_TRUE(reply.ok()) << reply.error();
      last = reply.jobs(0);
      if (last.state() != "queued" && last.state() != "running") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return last;
  }

  fs::path dir_;
  boost::asio::io_context io_;
  std::unique_ptr<Server> server_;
  std::thread thread_;
  std::uint16_t port_ = 0;
};

const std::string kSmall = std::string(WARPSIM_TEST_DATA_DIR) + "/small64.textproto";

TEST_F(ServeTest, SubmitStatusListAndCancel) {
  start();
  Client c("127.0.0.1", port_);
  spec::ServiceRequest submit;
  submit.mutable_submit()->set_experiment(read(kSmall));
  auto reply = c.call(submit);
  ASSERT_TRUE(reply.ok()) << reply.error();
  const std::string id = reply.jobs(0).id();
  EXPECT_EQ(id, "j1");
  const auto done = wait_done(c, id);
  EXPECT_EQ(done.state(), "done");
  EXPECT_EQ(done.exit_code(), 0);
  ASSERT_FALSE(done.output().empty());
  EXPECT_NE(read(done.output()).find("step seconds: "), std::string::npos);

  // A sweep with an inline base: two experiments, results listed per experiment.
  spec::ServiceRequest sweep;
  sweep.mutable_submit()->set_sweep("name: \"s\" base { " + read(kSmall) +
                                    " } axes { path: \"simulation.seed\" values: [\"1\", \"2\"] }");
  sweep.mutable_submit()->set_jobs(2);
  reply = c.call(sweep);
  ASSERT_TRUE(reply.ok()) << reply.error();
  EXPECT_EQ(wait_done(c, reply.jobs(0).id()).state(), "done");
  spec::ServiceRequest list;
  list.mutable_list_results();
  reply = c.call(list);
  ASSERT_TRUE(reply.ok());
  ASSERT_EQ(reply.results_size(), 3);  // the experiment + two sweep rows
  for (const auto& r : reply.results()) {
    EXPECT_EQ(r.status(), "done");
    EXPECT_GT(std::stod(r.values().at("step seconds")), 0.0);
  }

  // Cancel a running job (the 1024-GPU default experiment runs for seconds).
  spec::ServiceRequest big;
  big.mutable_submit()->set_experiment(read(std::string(WARPSIM_EXAMPLES_DIR) + "/default.textproto"));
  reply = c.call(big);
  ASSERT_TRUE(reply.ok()) << reply.error();
  const std::string big_id = reply.jobs(0).id();
  spec::ServiceRequest cancel;
  cancel.mutable_cancel()->set_id(big_id);
  reply = c.call(cancel);
  ASSERT_TRUE(reply.ok()) << reply.error();
  EXPECT_EQ(reply.jobs(0).state(), "cancelled");
  EXPECT_EQ(c.call(status_request(big_id)).jobs(0).state(), "cancelled");
  reply = c.call(cancel);  // twice: refused, it already ended
  EXPECT_FALSE(reply.ok());
  EXPECT_NE(reply.error().find("already ended"), std::string::npos) << reply.error();
  EXPECT_EQ(c.call(status_request()).jobs_size(), 3);
}

// Issue #25: a restart on the same --state used to start again at j1 and overwrite jobs/j1. Now the jobs of
// earlier runs are listed with their results, untouched, and new ids continue after the highest folder.
TEST_F(ServeTest, RestartKeepsHistoryAndNeverReusesAnId) {
  start();
  std::string j1_output, j1_summary;
  {
    Client c("127.0.0.1", port_);
    spec::ServiceRequest submit;
    submit.mutable_submit()->set_experiment(read(kSmall));
    auto reply = c.call(submit);
    ASSERT_TRUE(reply.ok()) << reply.error();
    ASSERT_EQ(reply.jobs(0).id(), "j1");
    const auto done = wait_done(c, "j1");
    ASSERT_EQ(done.state(), "done");
    j1_output = done.output();
    j1_summary = read(j1_output);
    ASSERT_NE(j1_summary.find("step seconds: "), std::string::npos);
    // j2 is still running when the service stops.
    submit.mutable_submit()->set_experiment(read(std::string(WARPSIM_EXAMPLES_DIR) + "/default.textproto"));
    reply = c.call(submit);
    ASSERT_TRUE(reply.ok()) << reply.error();
    ASSERT_EQ(reply.jobs(0).id(), "j2");
  }
  stop_server();
  const auto j1_time = fs::last_write_time(j1_output);
  // A folder made behind the service's back: its id is skipped, never reused.
  fs::create_directories(dir_ / "state" / "jobs" / "j5");

  start();
  spec::ServiceRequest submit;
  submit.mutable_submit()->set_experiment(read(kSmall));
  {
    Client c("127.0.0.1", port_);
    auto reply = c.call(status_request());
    ASSERT_TRUE(reply.ok()) << reply.error();
    ASSERT_EQ(reply.jobs_size(), 2);
    EXPECT_EQ(reply.jobs(0).id(), "j1");
    EXPECT_EQ(reply.jobs(0).state(), "done");
    EXPECT_EQ(reply.jobs(0).exit_code(), 0);
    EXPECT_EQ(reply.jobs(0).output(), j1_output);
    EXPECT_EQ(reply.jobs(1).id(), "j2");
    EXPECT_EQ(reply.jobs(1).state(), "interrupted");
    spec::ServiceRequest list;
    list.mutable_list_results();
    reply = c.call(list);
    ASSERT_TRUE(reply.ok()) << reply.error();
    ASSERT_EQ(reply.results_size(), 1);
    EXPECT_EQ(reply.results(0).job_id(), "j1");
    EXPECT_EQ(reply.results(0).experiment(), "small64");

    reply = c.call(submit);
    ASSERT_TRUE(reply.ok()) << reply.error();
    EXPECT_EQ(reply.jobs(0).id(), "j6");
    EXPECT_EQ(wait_done(c, "j6").state(), "done");
    EXPECT_EQ(read(j1_output), j1_summary);
    EXPECT_EQ(fs::last_write_time(j1_output), j1_time);
    EXPECT_EQ(c.call(status_request()).jobs_size(), 3);
    reply = c.call(list);
    ASSERT_EQ(reply.results_size(), 2);
    EXPECT_EQ(reply.results(1).job_id(), "j6");
  }

  // A third start continues from the counter even when the newest folder is gone.
  stop_server();
  fs::remove_all(dir_ / "state" / "jobs" / "j6");
  start();
  Client c("127.0.0.1", port_);
  const auto reply = c.call(submit);
  ASSERT_TRUE(reply.ok()) << reply.error();
  EXPECT_EQ(reply.jobs(0).id(), "j7");
}

// Issue #25: `warpsim client` waited forever on a service that accepts and never replies. A fake service
// here accepts every connection and says nothing; the client gives up after its timeout, and the CLI prints
// one error line and exits 124.
TEST_F(ServeTest, ClientTimesOutOnAServiceThatNeverReplies) {
  namespace asio = boost::asio;
  using asio::ip::tcp;
  asio::io_context fake_io;
  tcp::acceptor acceptor(fake_io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  const std::uint16_t port = acceptor.local_endpoint().port();
  std::vector<std::shared_ptr<tcp::socket>> held;  // accepted and never answered
  std::function<void()> accept = [&] {
    acceptor.async_accept([&](const boost::system::error_code& ec, tcp::socket s) {
      if (ec) return;
      held.push_back(std::make_shared<tcp::socket>(std::move(s)));
      accept();
    });
  };
  accept();
  std::thread fake([&] { fake_io.run(); });

  const auto t0 = std::chrono::steady_clock::now();
  std::string error;
  try {
    Client c("127.0.0.1", port, std::chrono::seconds(1));
    (void)c.call(status_request());
  } catch (const TimeoutError& e) {
    error = e.what();
  }
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(error,
            "no answer from 127.0.0.1:" + std::to_string(port) + " within 1 s (waiting for the reply)");
  EXPECT_GE(waited, 0.9);
  EXPECT_LT(waited, 5.0);

  // The CLI: one error line on stderr, exit code 124, well within the bound.
  const char* binary = std::getenv("WARPSIM_BINARY");
  ASSERT_NE(binary, nullptr);
  const std::string err_file = (dir_ / "client.err").string();
  const auto t1 = std::chrono::steady_clock::now();
  const int status = std::system((std::string(binary) + " client --port " + std::to_string(port) +
                                  " --timeout-s 1 status >/dev/null 2>" + err_file)
                                     .c_str());
  const double cli_waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 124);
  EXPECT_LT(cli_waited, 5.0);
  const std::string err = read(err_file);
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_EQ(err.rfind("warpsim: error: no answer from 127.0.0.1:", 0), 0u) << err;
  EXPECT_NE(err.find("within 1 s"), std::string::npos) << err;

  // A bad --timeout-s is a usage error.
  const int bad = std::system((std::string(binary) + " client --port " + std::to_string(port) +
                               " --timeout-s 0 status >/dev/null 2>" + err_file)
                                  .c_str());
  ASSERT_TRUE(WIFEXITED(bad));
  EXPECT_EQ(WEXITSTATUS(bad), 2);
  EXPECT_NE(read(err_file).find("--timeout-s must be more than 0"), std::string::npos) << read(err_file);

  std::size_t accepted = 0;
  asio::post(fake_io, [&] {
    accepted = held.size();
    acceptor.close();
    for (auto& s : held) s->close();
  });
  fake.join();
  EXPECT_EQ(accepted, 2u);  // both clients really were connected, and then heard nothing
}

// Issue #25: submit-sweep refused a sweep whose base is a file. The client now reads base_file (relative to
// the sweep file) and the base's own files and sends them inline; the service still reads no client files.
TEST_F(ServeTest, SweepWithABaseFileIsSentInline) {
  fs::create_directories(dir_ / "base");
  fs::create_directories(dir_ / "sweeps");
  fs::copy_file(kSmall, dir_ / "base" / "small64.textproto");
  const std::string sweep_file = (dir_ / "sweeps" / "s.textproto").string();
  std::ofstream(sweep_file) << "name: \"s\"\nbase_file: \"../base/small64.textproto\"\n"
                               "axes { path: \"simulation.seed\" values: [\"1\", \"2\"] }\n";
  const std::string text = self_contained_sweep_text(sweep_file);
  EXPECT_EQ(text.find("base_file"), std::string::npos) << text;
  EXPECT_NE(text.find("fat_tree_64xh100"), std::string::npos) << text;

  start();
  Client c("127.0.0.1", port_);
  spec::ServiceRequest submit;
  submit.mutable_submit()->set_sweep(read(sweep_file));  // as written: still refused by the service
  auto reply = c.call(submit);
  EXPECT_FALSE(reply.ok());
  EXPECT_NE(reply.error().find("base_file is not accepted"), std::string::npos) << reply.error();
  submit.mutable_submit()->set_sweep(text);
  submit.mutable_submit()->set_jobs(2);
  reply = c.call(submit);
  ASSERT_TRUE(reply.ok()) << reply.error();
  EXPECT_EQ(wait_done(c, reply.jobs(0).id()).state(), "done");
  spec::ServiceRequest list;
  list.mutable_list_results();
  reply = c.call(list);
  ASSERT_EQ(reply.results_size(), 2);
  EXPECT_EQ(reply.results(0).experiment(), "s-0");
  EXPECT_EQ(reply.results(1).experiment(), "s-1");
  for (const auto& r : reply.results()) EXPECT_EQ(r.status(), "done");

  // An experiment's job_file is inlined the same way; a self-contained file is sent as written.
  const std::string megatron = std::string(WARPSIM_EXAMPLES_DIR) + "/megatron-1t-3072xa100.textproto";
  ASSERT_NE(read(megatron).find("job_file"), std::string::npos);
  const std::string inlined = self_contained_experiment_text(megatron);
  EXPECT_EQ(inlined.find("job_file"), std::string::npos) << inlined;
  EXPECT_NE(inlined.find("job {"), std::string::npos) << inlined;
  EXPECT_EQ(self_contained_experiment_text(kSmall), read(kSmall));
  EXPECT_EQ(self_contained_sweep_text(std::string(WARPSIM_TEST_DATA_DIR) + "/small64-sweep.textproto")
                .find("base_file"),
            std::string::npos);

  // Errors name the field and the resolved file.
  auto error_of = [](const std::string& path) -> std::string {
    try {
      (void)self_contained_sweep_text(path);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "(no error)";
  };
  std::ofstream(dir_ / "sweeps" / "missing.textproto") << "base_file: \"nope.textproto\"\n";
  EXPECT_EQ(error_of((dir_ / "sweeps" / "missing.textproto").string()),
            "base_file: cannot read '" + (dir_ / "sweeps" / "nope.textproto").string() + "'");
  std::ofstream(dir_ / "base" / "bad.textproto") << "bogus: 1\n";
  std::ofstream(dir_ / "sweeps" / "bad.textproto") << "base_file: \"../base/bad.textproto\"\n";
  const std::string bad = error_of((dir_ / "sweeps" / "bad.textproto").string());
  EXPECT_EQ(bad.rfind("base_file: experiment spec ", 0), 0u) << bad;
  EXPECT_NE(bad.find("bogus"), std::string::npos) << bad;
  std::ofstream(dir_ / "sweeps" / "nocluster.textproto")
      << "base { name: \"x\" cluster_file: \"c.textproto\" }\n";
  EXPECT_EQ(error_of((dir_ / "sweeps" / "nocluster.textproto").string()),
            "base.cluster_file: cannot read '" + (dir_ / "sweeps" / "c.textproto").string() + "'");
}

TEST_F(ServeTest, RefusedRequestsGetAnErrorAndTheServiceKeepsServing) {
  ServerOptions o;
  o.max_message_bytes = 4096;
  start(o);
  Client c("127.0.0.1", port_);
  auto expect_error = [](const spec::ServiceReply& r, const std::string& part) {
    EXPECT_FALSE(r.ok());
    EXPECT_NE(r.error().find(part), std::string::npos) << r.error();
  };
  // Malformed payload: the connection stays usable.
  expect_error(c.call_raw(frame("\xff\xff\xff garbage")), "malformed request");
  EXPECT_TRUE(c.call(status_request()).ok());
  // Requests that parse but are invalid.
  expect_error(c.call(spec::ServiceRequest{}), "no kind");
  expect_error(c.call(status_request("../../etc")), "is not a job id");
  expect_error(c.call(status_request("j99")), "no job j99");
  spec::ServiceRequest bad;
  bad.mutable_submit()->set_experiment("name: \"x\" cluster_file: \"/etc/passwd\"");
  expect_error(c.call(bad), "cluster_file: not accepted");
  bad.mutable_submit()->set_experiment("nodes: 3");
  expect_error(c.call(bad), "experiment spec");
  bad.mutable_submit()->set_sweep("base_file: \"/etc/passwd\"");
  expect_error(c.call(bad), "base_file is not accepted");
  bad.mutable_submit()->set_sweep("base { " + read(kSmall) +
                                  " } axes { path: \"job.parallelism.tp\" values: [\"4\"] }");
  expect_error(c.call(bad), "job.parallelism.tp: unknown field");
  EXPECT_TRUE(c.call(status_request()).ok());
  // Oversized: an error reply, then that connection is closed; new ones are served.
  {
    Client big("127.0.0.1", port_);
    const auto header = encode_length(1u << 30);
    expect_error(big.call_raw(std::string(header.begin(), header.end())), "exceeds the limit of 4096 bytes");
  }
  spec::ServiceRequest large;
  large.mutable_submit()->set_experiment(std::string(5000, ' '));
  {
    Client big("127.0.0.1", port_);
    expect_error(big.call(large), "exceeds the limit");
  }
  Client after("127.0.0.1", port_);
  EXPECT_TRUE(after.call(status_request()).ok());
  EXPECT_TRUE(c.call(status_request()).ok());
}

TEST_F(ServeTest, TokenIsRequiredWhenConfigured) {
  ServerOptions o;
  o.token_file = token_file("0123456789abcdef-secret", fs::perms::owner_read | fs::perms::owner_write);
  start(o);
  Client c("127.0.0.1", port_);
  auto reply = c.call(status_request());
  EXPECT_FALSE(reply.ok());
  EXPECT_NE(reply.error().find("unauthenticated"), std::string::npos) << reply.error();
  auto wrong = status_request();
  wrong.set_token("0123456789abcdef-secreT");
  EXPECT_FALSE(c.call(wrong).ok());
  auto right = status_request();
  right.set_token("0123456789abcdef-secret");
  EXPECT_TRUE(c.call(right).ok());
}

TEST_F(ServeTest, BeyondLoopbackNeedsAPrivateTokenFile) {
  boost::asio::io_context io;
  ServerOptions o;
  o.jobs.state_dir = (dir_ / "state").string();
  o.bind_address = "0.0.0.0";
  auto error_of = [&](const ServerOptions& opts) -> std::string {
    try {
      Server s(io, opts);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "(started)";
  };
  EXPECT_NE(error_of(o).find("a --token-file (mode 0600) is required"), std::string::npos) << error_of(o);
  o.token_file = (dir_ / "missing").string();
  EXPECT_NE(error_of(o).find("cannot read"), std::string::npos) << error_of(o);
  o.token_file = token_file("0123456789abcdef-secret", fs::perms::owner_read | fs::perms::owner_write |
                                                           fs::perms::group_read | fs::perms::others_read);
  EXPECT_NE(error_of(o).find("has mode 0644"), std::string::npos) << error_of(o);
  fs::permissions(o.token_file, fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(error_of(o), "(started)");
  o.bind_address = "not-an-address";
  EXPECT_NE(error_of(o).find("--bind"), std::string::npos);
}

TEST_F(ServeTest, ThousandStatusRequestsFromEightClients) {
  start();
  constexpr int kClients = 8, kPerClient = 125;
  std::atomic<int> ok{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kClients; ++t) {
    threads.emplace_back([&] {
      try {
        Client c("127.0.0.1", port_);
        for (int i = 0; i < kPerClient; ++i) (c.call(status_request()).ok() ? ok : failed)++;
      } catch (const std::exception&) {
        failed += kPerClient;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), kClients * kPerClient);
  EXPECT_EQ(failed.load(), 0);
}

}  // namespace
}  // namespace warpsim::serve
