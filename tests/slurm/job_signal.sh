# The batch script traps USR1 (what --signal=B:USR1@N sends before the time limit) without killing the run:
# a USR1 sent to the batch shell mid-run is logged and the job still COMPLETES with the full result.
source "$(dirname "$0")/lib.sh"
args=(phold --end-time 20000 --lps-per-rank 1024)
id=$(submit -- "${args[@]}")
for ((i = 0; i < 240; i++)); do
  state=$("$WARPSIM" status "$id" | awk 'NR == 2 {print $2}')
  [[ $state == RUNNING || $state == COMPLETED ]] && break
  sleep 0.5
done
[[ $state == RUNNING ]] || fail "job $id never seen RUNNING (state $state); make the run longer"
sleep 0.3
scancel --batch --signal=USR1 "$id" || fail "scancel --signal=USR1 failed"
wait_completed "$id" >/dev/null
got=$(output_of "$id")
grep -q 'warpsim-slurm: USR1' <<<"$got" || fail "USR1 trap message missing from the job output"
want=$(run_local "${args[@]}")
[[ $(value "events committed" "$got") == "$(value "events committed" "$want")" ]] ||
  fail "signalled job $id: $(value "events committed" "$got") events, local $(value "events committed" "$want")"
echo "ok job $id: USR1 trapped, run completed with $(value "events committed" "$got") events (same as local)"
