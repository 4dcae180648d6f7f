// SubmitOptions: setting options by name, config files (comments, errors with line numbers) and validation
// (every invalid combination is rejected with a message naming the option).
#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>
#include <string>

#include "slurm/sbatch_script.hpp"
#include "slurm/submit_options.hpp"

namespace warpsim::slurm {
namespace {

SubmitOptions valid() {
  SubmitOptions o;
  o.warpsim_binary = "/usr/bin/warpsim";
  o.command = {"phold"};
  return o;
}

// Expects std::invalid_argument whose message contains `needle`.
template <typename F>
void expect_error(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one mentioning '" << needle << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(SetOption, ParsesEveryKey) {
  SubmitOptions o;
  set_option(o, "job-name", "x");
  set_option(o, "nodes", "4");
  set_option(o, "ntasks-per-node", "8");
  set_option(o, "cpus-per-task", "2");
  set_option(o, "time", "10:00");
  set_option(o, "partition", "p");
  set_option(o, "account", "a");
  set_option(o, "output-dir", "/o");
  set_option(o, "array", "16");
  set_option(o, "array-throttle", "4");
  set_option(o, "launcher", "mpirun");
  set_option(o, "requeue", "false");
  set_option(o, "signal-seconds", "120");
  set_option(o, "hold", "yes");
  EXPECT_EQ(o.job_name, "x");
  EXPECT_EQ(o.nodes, 4);
  EXPECT_EQ(o.ntasks_per_node, 8);
  EXPECT_EQ(o.cpus_per_task, 2);
  EXPECT_EQ(o.time_limit, "10:00");
  EXPECT_EQ(o.partition, "p");
  EXPECT_EQ(o.account, "a");
  EXPECT_EQ(o.output_dir, "/o");
  EXPECT_EQ(o.array_size, 16);
  EXPECT_EQ(o.array_throttle, 4);
  EXPECT_EQ(o.launcher, Launcher::kMpirun);
  EXPECT_FALSE(o.requeue);
  EXPECT_EQ(o.signal_seconds, 120);
  EXPECT_TRUE(o.hold);
}

TEST(SetOption, RejectsBadValuesNamingTheKey) {
  SubmitOptions o;
  expect_error([&] { set_option(o, "nodes", "0"); }, "nodes");
  expect_error([&] { set_option(o, "nodes", "2x"); }, "nodes: expected an integer");
  expect_error([&] { set_option(o, "nodes", ""); }, "nodes");
  expect_error([&] { set_option(o, "array", "-1"); }, "array");
  expect_error([&] { set_option(o, "signal-seconds", "70000"); }, "signal-seconds");
  expect_error([&] { set_option(o, "launcher", "pmi2"); }, "launcher");
  expect_error([&] { set_option(o, "requeue", "maybe"); }, "requeue");
  expect_error([&] { set_option(o, "gpus", "1"); }, "unknown Slurm option 'gpus'");
}

TEST(Config, ReadsKeyValueLinesWithComments) {
  SubmitOptions o;
  std::istringstream in("# site defaults\n\n  partition = gpu  \nnodes=2 # two nodes\ntime = 1-00:00:00\n");
  apply_config(o, in, "site.cfg");
  EXPECT_EQ(o.partition, "gpu");
  EXPECT_EQ(o.nodes, 2);
  EXPECT_EQ(o.time_limit, "1-00:00:00");
}

TEST(Config, ErrorsNameFileAndLine) {
  SubmitOptions o;
  std::istringstream bad_key("nodes = 2\nfrobnicate = 1\n");
  expect_error([&] { apply_config(o, bad_key, "site.cfg"); },
               "site.cfg:2: unknown Slurm option 'frobnicate'");
  std::istringstream no_eq("nodes 2\n");
  expect_error([&] { apply_config(o, no_eq, "site.cfg"); }, "site.cfg:1: expected 'key = value'");
  std::istringstream bad_value("\n\nntasks-per-node = lots\n");
  expect_error([&] { apply_config(o, bad_value, "c"); }, "c:3: ntasks-per-node");
  expect_error([&] { apply_config_file(o, "/nonexistent/x.cfg"); }, "--config: cannot read");
}

TEST(Validate, AcceptsSlurmTimeFormats) {
  for (const char* t : {"30", "30:00", "1:30:00", "2-0", "2-12:00", "2-12:00:00"}) {
    auto o = valid();
    o.time_limit = t;
    EXPECT_NO_THROW(validate(o)) << t;
  }
  for (const char* t : {"1:2:3:4", "1h", "-5", "2-", ":30", "1 day"}) {
    auto o = valid();
    o.time_limit = t;
    expect_error([&] { validate(o); }, "time");
  }
}

TEST(Validate, RejectsInvalidCombinations) {
  auto o = valid();
  o.array_throttle = 2;
  expect_error([&] { validate(o); }, "array-throttle: needs array");
  o = valid();
  o.command = {"phold", "--seed", "{task}"};
  expect_error([&] { validate(o); }, "{task}");
  o.array_size = 4;
  EXPECT_NO_THROW(validate(o));
  o = valid();
  o.launcher = Launcher::kNone;
  o.nodes = 2;
  expect_error([&] { validate(o); }, "launcher");
  o = valid();
  o.command.clear();
  expect_error([&] { validate(o); }, "command");
  o = valid();
  o.command.push_back("a\nb");
  expect_error([&] { validate(o); }, "newline");
  o = valid();
  o.warpsim_binary = "warpsim";
  expect_error([&] { validate(o); }, "absolute path");
}

TEST(Validate, DirectiveValuesNeedNoQuoting) {
  auto o = valid();
  o.job_name = "a b";
  expect_error([&] { validate(o); }, "job-name");
  o = valid();
  o.job_name = "";
  expect_error([&] { validate(o); }, "job-name");
  o = valid();
  o.partition = "gpu\n#SBATCH --x";
  expect_error([&] { validate(o); }, "partition");
  o = valid();
  o.account = "acc'";
  expect_error([&] { validate(o); }, "account");
  o = valid();
  o.output_dir = "/my out";
  expect_error([&] { validate(o); }, "output-dir");
  // render validates too, so an invalid value never reaches a script.
  expect_error([&] { render_sbatch_script(o); }, "output-dir");
}

}  // namespace
}  // namespace warpsim::slurm
