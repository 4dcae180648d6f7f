# One warpsim run submitted with `warpsim submit` (srun --mpi=pmix, 1 task) reports the same committed-event
# count and state digest as the same command run locally.
source "$(dirname "$0")/lib.sh"
args=(phold --end-time 200 --lps-per-rank 256)
id=$(submit -- "${args[@]}")
wait_completed "$id"
got=$(output_of "$id")
want=$(run_local "${args[@]}")
want_events=$(value "events committed" "$want")
[[ -n $want_events && $want_events -gt 0 ]] || fail "local run committed nothing"
[[ $(value "events committed" "$got") == "$want_events" ]] ||
  fail "job $id: $(value "events committed" "$got") events committed, local run $want_events"
[[ $(value "state digest" "$got") == "$(value "state digest" "$want")" ]] ||
  fail "job $id: digest $(value "state digest" "$got"), local $(value "state digest" "$want")"
[[ -f $out/warpsim-$id.sbatch ]] || fail "rendered script not kept as $out/warpsim-$id.sbatch"
echo "ok job $id: $want_events events committed, digest $(value "state digest" "$got") (same as local)"
