#!/usr/bin/env bash
# What Slurm does before preempting or timing out a job: SIGUSR1 (to mpiexec, which forwards it to every
# rank) or SIGTERM (to the process) makes a `warpsim phold --checkpoint-dir` run agree on a cut, write a
# checkpoint there and exit 3; resumed in a new process it ends with the same per-LP state digests, state
# digest, committed events and HDF5 series as an uninterrupted run. A periodic checkpoint
# (--checkpoint-every-seconds) does not change the results either.
set -euo pipefail
WARPSIM=$1
HERE=$(dirname "${BASH_SOURCE[0]}")
MPIEXEC=${WARPSIM_MPIEXEC:-mpiexec --oversubscribe --allow-run-as-root}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
result() { grep -E '^(events committed|state digest):' "$1"; }

# signal_case NAME SIGNAL LAUNCH... : LAUNCH is the command prefix that starts warpsim (mpiexec or nothing).
signal_case() {
  local name=$1 sig=$2 d="$TMP/$1" code=0 pid waited=0
  shift 2
  mkdir -p "$d"
  "$@" "$WARPSIM" phold $PHOLD --progress-seconds 0 --output "$d/full.h5" --digest-file "$d/full.dig" >"$d/full.txt"
  "$@" "$WARPSIM" phold $PHOLD --progress-seconds 0.1 --output "$d/res.h5" --checkpoint-dir "$d/ckpt" \
    >"$d/stop.txt" 2>"$d/stop.err" &
  pid=$!
  # Signal once the simulation runs (its first progress line), not while MPI starts up.
  until grep -q 'progress:' "$d/stop.err" 2>/dev/null; do
    sleep 0.05
    waited=$((waited + 1))
    ((waited < 1200)) || { echo "FAIL $name: no progress line within 60 s"; kill "$pid"; exit 1; }
  done
  kill -s "$sig" "$pid"
  wait "$pid" || code=$?
  [[ $code -eq 3 ]] || { echo "FAIL $name: exit $code after SIG$sig, not 3"; cat "$d/stop.err"; exit 1; }
  grep -q '^checkpoint: ' "$d/stop.txt" || { echo "FAIL $name: no checkpoint reported"; exit 1; }
  "$@" "$WARPSIM" phold $PHOLD --progress-seconds 0 --output "$d/res.h5" --digest-file "$d/res.dig" \
    --resume "$d/ckpt" >"$d/res.txt" 2>"$d/res.err"
  cmp "$d/full.dig" "$d/res.dig" || { echo "FAIL $name: per-LP digests differ"; exit 1; }
  diff <(result "$d/full.txt") <(result "$d/res.txt") || { echo "FAIL $name: summary differs"; exit 1; }
  /usr/bin/python3 "$HERE/compare_results.py" "$d/full.h5" "$d/res.h5"
  echo "ok $name: stopped at time $(sed -n 's/^checkpoint time: //p' "$d/stop.txt") of $END, $(result "$d/res.txt" | tr '\n' ' ')"
}

END=20000  # long enough (about a second per run here) that the signal always lands before the end
PHOLD="--lps-per-rank 512 --end-time $END --sample-interval 500 --sync optimistic"
signal_case usr1_mpiexec_np2 USR1 $MPIEXEC -np 2
PHOLD="--lps-per-rank 2048 --end-time $END --sample-interval 500 --sync sequential"
signal_case term_sequential TERM env

# Periodic checkpoints while the run continues.
d="$TMP/every"
mkdir -p "$d"
PHOLD="--lps-per-rank 512 --end-time $END"
$MPIEXEC -np 2 "$WARPSIM" phold $PHOLD --progress-seconds 0 --digest-file "$d/full.dig" >"$d/full.txt"
$MPIEXEC -np 2 "$WARPSIM" phold $PHOLD --progress-seconds 0 --digest-file "$d/every.dig" --checkpoint-dir "$d/ckpt" \
  --checkpoint-every-seconds 0.3 >"$d/every.txt" 2>"$d/every.err"
cmp "$d/full.dig" "$d/every.dig" || { echo "FAIL every: per-LP digests differ"; exit 1; }
diff <(result "$d/full.txt") <(result "$d/every.txt") || { echo "FAIL every: summary differs"; exit 1; }
echo "ok every 0.3 s: $(grep -c 'checkpoint: wrote' "$d/every.err") checkpoints written, results unchanged"
