#!/usr/bin/env bash
# `warpsim run --output` stopped at a checkpoint and resumed in a new process gives the same summary (every
# key but the run-cost ones) and the same HDF5 contents as an uninterrupted run: sequential, conservative
# and optimistic on 1, 2 and 4 ranks; a run that writes a checkpoint and continues; and a checkpoint taken
# by the optimistic mode resumed by the sequential one (the committed state at a cut is mode-independent);
# the flow fidelity (flow network LP). PART (a or b) picks half of the cases, so each test stays short.
set -euo pipefail
WARPSIM=$1
SPEC=$2
PART=$3
HERE=$(dirname "${BASH_SOURCE[0]}")
MPIEXEC=${WARPSIM_MPIEXEC:-mpiexec --oversubscribe --allow-run-as-root}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# Keys that describe the run's cost or how it was executed, not the simulated result.
volatile='^(events processed|events rolled back|efficiency|rollbacks|event rate|wall seconds|peak rss bytes|peak rss bytes total|cpu share min|output file|output seconds|output bytes):'
summary() { grep -E '^[a-z].*: ' "$1" | grep -Ev "$volatile"; }
AT_NS=${WARPSIM_CHECKPOINT_AT_NS:-12000000}  # default 12 ms: inside the first of small.textproto's two ~32 ms steps

# check NAME NP SYNC [RESUME_SYNC]: full run vs checkpoint-and-stop + resume in a new process.
check() {
  local name=$1 np=$2 sync=$3 resume_sync=${4:-$3} d="$TMP/$1" code=0
  mkdir -p "$d"
  $MPIEXEC -np "$np" "$WARPSIM" run "$SPEC" --sync "$sync" --progress-seconds 0 --output "$d/full.h5" >"$d/full.txt"
  $MPIEXEC -np "$np" "$WARPSIM" run "$SPEC" --sync "$sync" --progress-seconds 0 --output "$d/res.h5" \
    --checkpoint-dir "$d/ckpt" --checkpoint-at-ns $AT_NS --stop-at-checkpoint >"$d/stop.txt" 2>"$d/stop.err" ||
    code=$?
  [[ $code -eq 3 ]] || { echo "FAIL $name: the stopped run exited $code, not 3"; cat "$d/stop.err"; exit 1; }
  grep -q "^checkpoint: .*ckpt-0*${AT_NS}000\$" "$d/stop.txt" || { echo "FAIL $name: no checkpoint line"; exit 1; }
  [[ ! -e "$d/res.h5" ]] || { echo "FAIL $name: the stopped run wrote its results file"; exit 1; }
  $MPIEXEC -np "$np" "$WARPSIM" run "$SPEC" --sync "$resume_sync" --progress-seconds 0 --output "$d/res.h5" \
    --resume "$d/ckpt" >"$d/res.txt"
  if [[ "$resume_sync" != "$sync" ]]; then sed -i "s/^sync: $resume_sync\$/sync: $sync/" "$d/res.txt"; fi
  if ! diff <(summary "$d/full.txt") <(summary "$d/res.txt"); then
    echo "FAIL $name: the resumed run's summary differs from the uninterrupted run's"
    exit 1
  fi
  if [[ "$resume_sync" == "$sync" ]]; then
    /usr/bin/python3 "$HERE/compare_results.py" "$d/full.h5" "$d/res.h5"
  fi
  echo "ok $name: $(grep -E '^(events committed|state digest):' "$d/res.txt" | tr '\n' ' ')"
}

if [[ $PART == a ]]; then
  check seq_np1 1 sequential
  check opt_np1 1 optimistic
  check opt_np2 2 optimistic
  check opt_to_seq 1 optimistic sequential
  exit 0
fi
check opt_np4 4 optimistic
check cons_np2 2 conservative
FLOW="$TMP/flow.textproto"
sed 's/simulation { steps: 2 }/simulation { steps: 2 fidelity: "flow" }/' "$SPEC" >"$FLOW"
grep -q 'fidelity: "flow"' "$FLOW" || { echo "FAIL: could not make the flow-fidelity spec"; exit 1; }
SPEC=$FLOW check flow_opt_np2 2 optimistic

# A checkpoint written on the way does not change the run (the engine continues after writing it).
d="$TMP/continue"
mkdir -p "$d"
$MPIEXEC -np 2 "$WARPSIM" run "$SPEC" --progress-seconds 0 --output "$d/full.h5" >"$d/full.txt"
$MPIEXEC -np 2 "$WARPSIM" run "$SPEC" --progress-seconds 0 --output "$d/cont.h5" --checkpoint-dir "$d/ckpt" \
  --checkpoint-at-ns $AT_NS >"$d/cont.txt"
diff <(summary "$d/full.txt") <(summary "$d/cont.txt") || { echo "FAIL continue: summary differs"; exit 1; }
/usr/bin/python3 "$HERE/compare_results.py" "$d/full.h5" "$d/cont.h5"
ls "$d/ckpt"/ckpt-*/manifest >/dev/null || { echo "FAIL continue: no checkpoint written"; exit 1; }
echo "ok continue after a checkpoint"
