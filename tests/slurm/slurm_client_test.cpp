// Parsing of `scontrol show job -o` records (single jobs, started array tasks and the pending remainder of an
// array), job-id checks and terminal states. Live behaviour is covered by the job_*.sh tests.
#include <gtest/gtest.h>

#include <stdexcept>

#include <cstdlib>

#include "slurm/process.hpp"
#include "slurm/slurm_client.hpp"

namespace warpsim::slurm {
namespace {

TEST(ParseScontrol, SingleJob) {
  const auto records = parse_scontrol_records(
      "JobId=17 JobName=warpsim UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=1 JobState=COMPLETED "
      "Reason=None Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0 RunTime=00:00:01 "
      "Command=/tmp/a b/script.sh WorkDir=/tmp\n");
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].id, "17");
  EXPECT_EQ(records[0].name, "warpsim");
  EXPECT_EQ(records[0].state, "COMPLETED");
  EXPECT_EQ(records[0].reason, "None");
  EXPECT_EQ(records[0].exit_code, "0:0");
}

TEST(ParseScontrol, ArrayTasksAndPendingRemainder) {
  const auto records = parse_scontrol_records(
      "JobId=20 ArrayJobId=20 ArrayTaskId=2-3%2 ArrayTaskThrottle=2 JobName=sweep JobState=PENDING "
      "Reason=JobArrayTaskLimit ExitCode=0:0\n"
      "JobId=22 ArrayJobId=20 ArrayTaskId=1 JobName=sweep JobState=RUNNING Reason=None ExitCode=0:0\n"
      "JobId=21 ArrayJobId=20 ArrayTaskId=0 JobName=sweep JobState=FAILED Reason=NonZeroExitCode "
      "ExitCode=2:0\n"
      "JobId=23 ArrayJobId=20 ArrayTaskId=10 JobName=sweep JobState=COMPLETED Reason=None ExitCode=0:0\n");
  // Sorted: started tasks by id, then the pending remainder.
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[0].id, "20_0");
  EXPECT_EQ(records[0].state, "FAILED");
  EXPECT_EQ(records[0].exit_code, "2:0");
  EXPECT_EQ(records[1].id, "20_1");
  EXPECT_EQ(records[1].state, "RUNNING");
  EXPECT_EQ(records[2].id, "20_10");  // numeric, not text, order
  EXPECT_EQ(records[3].id, "20_[2-3%2]");
  EXPECT_EQ(records[3].reason, "JobArrayTaskLimit");
}

TEST(ParseScontrol, KeysMatchOnlyWholeFields) {
  // "ArrayJobId=" must not be read as "JobId=", nor "OldJobState=" as "JobState=".
  const auto records = parse_scontrol_records("JobId=5 XJobState=BOGUS JobState=RUNNING Reason=None\n");
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].state, "RUNNING");
  EXPECT_TRUE(parse_scontrol_records("").empty());
  EXPECT_TRUE(parse_scontrol_records("\n\n").empty());
}

TEST(JobId, Checked) {
  EXPECT_NO_THROW(check_job_id("12"));
  EXPECT_NO_THROW(check_job_id("12_3"));
  for (const char* bad : {"", "12x", "x", "12_", "_3", "12;rm", "-1", "12 13"}) {
    EXPECT_THROW(check_job_id(bad), std::invalid_argument) << bad;
  }
}

TEST(States, Terminal) {
  for (const char* s : {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY"}) {
    EXPECT_TRUE(is_terminal_state(s)) << s;
  }
  for (const char* s : {"PENDING", "RUNNING", "COMPLETING", "REQUEUED", "SUSPENDED", ""}) {
    EXPECT_FALSE(is_terminal_state(s)) << s;
  }
}

TEST(Process, ChildrenGetTheStartupEnvironmentNotLaterChanges) {
  // What MPI_Init does to the environment (setenv) must not reach sbatch and thus the job.
  ::setenv("WARPSIM_TEST_ADDED_AFTER_START", "1", 1);
  const auto r = run_process({"sh", "-c", "echo \"${WARPSIM_TEST_ADDED_AFTER_START:-unset} ${PATH:+path}\""});
  ::unsetenv("WARPSIM_TEST_ADDED_AFTER_START");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "unset path\n");
}

TEST(Process, CapturesStdoutStderrAndExitCode) {
  const auto r = run_process({"sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_THROW(run_process({"/nonexistent/warpsim-no-such-tool"}), std::runtime_error);
}

}  // namespace
}  // namespace warpsim::slurm
