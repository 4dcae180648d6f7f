# A 4-experiment sweep submitted as a job array (`warpsim sweep --slurm`, throttle %2): every task COMPLETED,
# its index equals the index of the same sweep run locally (every column but wall_seconds), and a task run
# again (what a requeue does) finds its experiment done and leaves its result untouched.
source "$(dirname "$0")/lib.sh"
small=$(cd "$(dirname "$0")/../jobs/sweep" && pwd)/small64.textproto
spec=$work/sweep.textproto
cat >"$spec" <<SPEC
name: "slurm-sweep"
base_file: "$small"
axes { path: "cluster.fat_tree.links.0.bandwidth_gbps" values: ["200", "400"] }
zip {
  axes { path: "job.parallelism.pipeline_parallel" values: ["2", "4"] }
  axes { path: "job.parallelism.data_parallel" values: ["4", "2"] }
}
axes { path: "simulation.seed" values: ["7"] }
SPEC
"$WARPSIM" --log-level warn sweep "$spec" --out "$work/local" --jobs 2 --no-progress >/dev/null ||
  fail "local sweep failed"
id=$("$WARPSIM" --log-level warn sweep "$spec" --out "$work/slurm" --jobs 2 --slurm) || fail "sweep --slurm failed"
[[ $id =~ ^[0-9]+$ ]] || fail "sweep --slurm printed '$id', not a job id"
out=$work/slurm/slurm  # where lib.sh's diagnostics look for job output
report=$(wait_completed "$id")
echo "$report"
[[ $(grep -c ' COMPLETED ' <<<"$report") -eq 4 ]] || fail "expected 4 COMPLETED tasks: $report"
grep -q -- '--array=0-3%2' "$work"/slurm/slurm/*.sbatch || fail "the array is not 0-3 throttled to %2"

# Compare the two indexes without the run-cost column (wall_seconds differs between any two runs).
strip() { awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "wall_seconds") drop = i } { $drop = ""; print }' OFS=, "$1"; }
[[ $(($(wc -l <"$work/slurm/index.csv") - 1)) -eq 4 ]] || fail "Slurm index has $(wc -l <"$work/slurm/index.csv") lines"
[[ $(grep -c ',done,' "$work/slurm/index.csv") -eq 4 ]] || fail "Slurm index rows not all done: $(cat "$work/slurm/index.csv")"
diff <(strip "$work/local/index.csv") <(strip "$work/slurm/index.csv") >&2 ||
  fail "the Slurm sweep's index differs from the local sweep's"
echo "ok: Slurm index equals the local index (4 rows, metric columns)"

# Requeue-friendly: a task that runs again reruns only its own experiment, and only if it is not done.
first=$(sed -n 2p "$work/slurm/index.csv" | cut -d, -f2)
before=$(stat -c '%i %.9Y' "$work/slurm/results/$first.txt")
"$WARPSIM" --log-level warn sweep --out "$work/slurm" --task 0 || fail "rerun of task 0 failed"
[[ $(stat -c '%i %.9Y' "$work/slurm/results/$first.txt") == "$before" ]] || fail "task 0 redid a finished experiment"
rm "$work/slurm/results/$first.txt"
"$WARPSIM" --log-level warn sweep --out "$work/slurm" --task 0 || fail "task 0 after losing its result failed"
diff <(strip "$work/local/index.csv") <(strip "$work/slurm/index.csv") >&2 || fail "index differs after a task rerun"
echo "ok: a rerun task skips its finished experiment and redoes only its own lost one"
