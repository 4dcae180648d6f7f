// Rendering of sbatch scripts: shell quoting (checked by letting bash parse the result), {task} substitution,
// array throttle, directives and launcher lines.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "slurm/process.hpp"
#include "slurm/sbatch_script.hpp"

namespace warpsim::slurm {
namespace {

SubmitOptions basic() {
  SubmitOptions o;
  o.warpsim_binary = "/opt/warpsim/bin/warpsim";
  o.output_dir = "/scratch/out";
  o.command = {"phold", "--end-time", "200"};
  return o;
}

// What bash makes of `printf '<%s>\n' WORDS` with SLURM_ARRAY_TASK_ID set: one <...> per word.
std::string bash_words(const std::string& words, const std::string& task_id = "7") {
  const auto r =
      run_process({"env", "SLURM_ARRAY_TASK_ID=" + task_id, "bash", "-c", "printf '<%s>\\n' " + words});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

bool contains_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

TEST(ShellQuote, RoundTripsThroughBash) {
  const std::vector<std::string> tricky{"plain",     "two words", "it's",       "\"double\"", "$HOME",
                                        "`id`",      "a\\b",      "semi;colon", "*",          "",
                                        "new\nline", "{task}x",   "--flag=v a", "'",          "tab\there"};
  for (const auto& arg : tricky) {
    EXPECT_EQ(bash_words(shell_quote(arg)), "<" + arg + ">\n") << "argument: " << arg;
  }
}

TEST(ShellQuote, PlainWordsStayReadable) {
  EXPECT_EQ(shell_quote("--end-time=200"), "--end-time=200");
  EXPECT_EQ(shell_quote("/a/b.c"), "/a/b.c");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote(""), "''");
}

TEST(ShellQuote, TaskPlaceholderExpandsAtRunTime) {
  EXPECT_EQ(bash_words(shell_quote_with_task("{task}")), "<7>\n");
  EXPECT_EQ(bash_words(shell_quote_with_task("out dir/{task}-{task}.h5"), "12"), "<out dir/12-12.h5>\n");
  EXPECT_EQ(bash_words(shell_quote_with_task("it's {task}'s $x")), "<it's 7's $x>\n");
  EXPECT_EQ(bash_words(shell_quote_with_task("no placeholder")), "<no placeholder>\n");
  EXPECT_EQ(bash_words(shell_quote_with_task("")), "<>\n");
}

TEST(RenderScript, DirectivesForASingleJob) {
  auto o = basic();
  o.job_name = "phold-small";
  o.nodes = 2;
  o.ntasks_per_node = 4;
  o.cpus_per_task = 3;
  o.time_limit = "01:30:00";
  o.partition = "gpu";
  o.account = "proj42";
  const std::string s = render_sbatch_script(o);
  EXPECT_EQ(s.rfind("#!/bin/bash\n", 0), 0u);
  for (const char* line :
       {"#SBATCH --job-name=phold-small", "#SBATCH --nodes=2", "#SBATCH --ntasks-per-node=4",
        "#SBATCH --cpus-per-task=3", "#SBATCH --time=01:30:00", "#SBATCH --partition=gpu",
        "#SBATCH --account=proj42", "#SBATCH --output=/scratch/out/phold-small-%j.out", "#SBATCH --requeue",
        "#SBATCH --signal=B:USR1@60", "cmd=(srun --mpi=pmix /opt/warpsim/bin/warpsim phold --end-time 200)",
        "trap on_usr1 USR1"}) {
    EXPECT_TRUE(contains_line(s, line)) << "missing line: " << line << "\n" << s;
  }
  EXPECT_EQ(s.find("--array"), std::string::npos);
  EXPECT_EQ(s.find("--hold"), std::string::npos);
}

TEST(RenderScript, OptionalDirectivesOmittedWhenUnset) {
  auto o = basic();
  o.requeue = false;
  o.signal_seconds = 0;
  const std::string s = render_sbatch_script(o);
  EXPECT_EQ(s.find("--time"), std::string::npos);
  EXPECT_EQ(s.find("--partition"), std::string::npos);
  EXPECT_EQ(s.find("--account"), std::string::npos);
  EXPECT_EQ(s.find("--signal"), std::string::npos);
  EXPECT_TRUE(contains_line(s, "#SBATCH --no-requeue"));
}

TEST(RenderScript, ArrayWithThrottleAndTaskSubstitution) {
  auto o = basic();
  o.array_size = 16;
  o.array_throttle = 3;
  o.command = {"phold", "--seed", "{task}", "--digest-file", "d {task}.txt"};
  const std::string s = render_sbatch_script(o);
  EXPECT_TRUE(contains_line(s, "#SBATCH --array=0-15%3")) << s;
  EXPECT_TRUE(contains_line(s, "#SBATCH --output=/scratch/out/warpsim-%A_%a.out")) << s;
  EXPECT_TRUE(
      contains_line(s,
                    "cmd=(srun --mpi=pmix /opt/warpsim/bin/warpsim phold --seed \"${SLURM_ARRAY_TASK_ID}\" "
                    "--digest-file 'd '\"${SLURM_ARRAY_TASK_ID}\".txt)"))
      << s;
  o.array_throttle = 0;
  EXPECT_TRUE(contains_line(render_sbatch_script(o), "#SBATCH --array=0-15"));
}

TEST(RenderScript, MpirunAndNoLauncher) {
  auto o = basic();
  o.launcher = Launcher::kMpirun;
  o.ntasks_per_node = 2;
  std::string s = render_sbatch_script(o);
  EXPECT_TRUE(
      contains_line(s, "cmd=(mpirun -np \"${SLURM_NTASKS}\" /opt/warpsim/bin/warpsim phold --end-time 200)"))
      << s;
  EXPECT_NE(s.find("--allow-run-as-root"), std::string::npos);
  o.launcher = Launcher::kNone;
  o.ntasks_per_node = 1;
  s = render_sbatch_script(o);
  EXPECT_TRUE(contains_line(s, "cmd=(/opt/warpsim/bin/warpsim phold --end-time 200)")) << s;
}

TEST(RenderScript, BinaryPathWithSpacesIsQuoted) {
  auto o = basic();
  o.warpsim_binary = "/home/me/my builds/warpsim";
  EXPECT_TRUE(contains_line(render_sbatch_script(o),
                            "cmd=(srun --mpi=pmix '/home/me/my builds/warpsim' phold --end-time 200)"));
}

TEST(RenderScript, ScriptIsValidBash) {
  auto o = basic();
  o.array_size = 2;
  o.command = {"phold", "--seed", "{task}", "it's \"quoted\" $(not run)"};
  const auto r = run_process({"bash", "-n", "-c", render_sbatch_script(o)});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(RenderScript, HoldDirective) {
  auto o = basic();
  o.hold = true;
  EXPECT_TRUE(contains_line(render_sbatch_script(o), "#SBATCH --hold"));
}

}  // namespace
}  // namespace warpsim::slurm
