# A 4-task job array with throttle 2: {task} gives each task its own --seed; all tasks COMPLETED, each output
# equals a local run with that seed, and the four results differ.
source "$(dirname "$0")/lib.sh"
id=$(submit --array 4 --array-throttle 2 -- phold --end-time 100 --lps-per-rank 128 --seed '{task}')
report=$(wait_completed "$id")
echo "$report"
[[ $(grep -c ' COMPLETED ' <<<"$report") -eq 4 ]] || fail "expected 4 COMPLETED tasks: $report"
digests=()
for task in 0 1 2 3; do
  f=$out/warpsim-${id}_$task.out
  [[ -f $f ]] || fail "no output for task $task ($f)"
  got=$(<"$f")
  want=$(run_local phold --end-time 100 --lps-per-rank 128 --seed "$task")
  [[ $(value "events committed" "$got") == "$(value "events committed" "$want")" &&
    $(value "state digest" "$got") == "$(value "state digest" "$want")" ]] ||
    fail "task $task differs from a local run with --seed $task"
  digests+=("$(value "state digest" "$got")")
  echo "ok task $task: $(value "events committed" "$got") events, digest ${digests[-1]} (same as local --seed $task)"
done
[[ $(printf '%s\n' "${digests[@]}" | sort -u | wc -l) -eq 4 ]] || fail "array tasks did not get distinct seeds"
