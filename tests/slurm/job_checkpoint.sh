# warpsim submit --checkpoint-dir: a USR1 to the batch shell (what --signal=B:USR1@N sends before the time
# limit) is passed through srun to warpsim, which writes a checkpoint and exits 3; the script requeues the job,
# the second attempt resumes from the checkpoint and the job COMPLETES with the result of a local run.
# Slurm makes a requeued job eligible again only ~2 minutes later (its BeginTime); the test moves that to
# now once it sees the requeue (the wait stays long enough for Slurm's own delay should the update fail).
export WARPSIM_SLURM_WAIT=${WARPSIM_SLURM_WAIT:-220}
source "$(dirname "$0")/lib.sh"
args=(phold --end-time 20000 --lps-per-rank 1024)
id=$(submit --checkpoint-dir "$work/ckpt" -- "${args[@]}" --progress-seconds 0.2)
for ((i = 0; i < 240; i++)); do
  state=$("$WARPSIM" status "$id" | awk 'NR == 2 {print $2}')
  [[ $state == RUNNING || $state == COMPLETED ]] && break
  sleep 0.5
done
[[ $state == RUNNING ]] || fail "job $id never seen RUNNING (state $state); make the run longer"
for ((i = 0; i < 240; i++)); do  # signal once the simulation runs, not while MPI starts
  grep -q 'progress:' "$out/warpsim-$id.out" 2>/dev/null && break
  sleep 0.25
done
scancel --batch --signal=USR1 "$id" || fail "scancel --signal=USR1 failed"
for ((i = 0; i < 240; i++)); do  # the first attempt checkpoints, exits 3 and its script requeues the job
  record=$(scontrol show job "$id" 2>/dev/null || true)
  grep -q 'Restarts=[1-9]' <<<"$record" && grep -q 'JobState=PENDING' <<<"$record" && break
  grep -q 'JobState=COMPLETED' <<<"$record" && break
  sleep 0.25
done
if grep -q 'JobState=PENDING' <<<"$record"; then
  scontrol update JobId="$id" StartTime=now || echo "note: could not move job $id's start to now; waiting for Slurm"
fi
wait_completed "$id" >/dev/null
got=$(output_of "$id")
grep -q 'restart 1 .*--resume' <<<"$got" || fail "the requeued attempt did not resume: $got"
grep -q 'checkpoint: resuming from' <<<"$got" || fail "no resume in the job output"
want=$(run_local "${args[@]}")
for key in "events committed" "state digest"; do
  [[ $(value "$key" "$got") == "$(value "$key" "$want")" ]] ||
    fail "job $id: $key $(value "$key" "$got"), local $(value "$key" "$want")"
done
echo "ok job $id: USR1 -> checkpoint -> requeued -> resumed; $(value "events committed" "$got") events, digest $(value "state digest" "$got") (same as local)"
