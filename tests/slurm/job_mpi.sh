# A 2-rank MPI job (srun --mpi=pmix, and mpirun inside the allocation) gives the same committed events and
# state digest as a local 1-rank sequential run over the same total LP count (2 x 256 = 512).
source "$(dirname "$0")/lib.sh"
want=$(run_local phold --sync sequential --lps-per-rank 512 --end-time 200)
want_events=$(value "events committed" "$want")
want_digest=$(value "state digest" "$want")
[[ -n $want_events && $want_events -gt 0 ]] || fail "local sequential run committed nothing"
srun_id=$(submit --job-name srun2 --ntasks-per-node 2 -- phold --lps-per-rank 256 --end-time 200)
mpirun_id=$(submit --job-name mpirun2 --ntasks-per-node 2 --launcher mpirun -- phold --lps-per-rank 256 \
  --end-time 200)
for spec in "srun2 $srun_id" "mpirun2 $mpirun_id"; do
  read -r name id <<<"$spec"
  wait_completed "$id" >/dev/null
  f=$out/$name-$id.out
  [[ -f $f ]] || fail "no output $f"
  got=$(<"$f")
  [[ $(value "ranks" "$got") == 2 ]] || fail "$name job $id ran on $(value "ranks" "$got") ranks, expected 2"
  [[ $(value "events committed" "$got") == "$want_events" ]] ||
    fail "$name job $id: $(value "events committed" "$got") events, sequential $want_events"
  [[ $(value "state digest" "$got") == "$want_digest" ]] ||
    fail "$name job $id: digest $(value "state digest" "$got"), sequential $want_digest"
  echo "ok $name job $id: 2 ranks, $want_events events, digest $want_digest (same as 1-rank sequential)"
done
