#!/usr/bin/env bash
# The sync-mode oracle with the HDF5 output: `warpsim run SPEC --output` gives the same summary (every key but
# the run-cost ones), state digest and /series, /components and /summary for optimistic sync on 1, 2 and 4
# ranks as the sequential run. Args: path/to/warpsim SPEC. Env: WARPSIM_MPIEXEC.
set -euo pipefail
WARPSIM=$1
SPEC=$2
MPIEXEC=${WARPSIM_MPIEXEC:-mpiexec --oversubscribe --allow-run-as-root}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
volatile='^(sync|ranks|partition|events processed|events rolled back|efficiency|rollbacks|remote events|remote event fraction|event rate|wall seconds|peak rss bytes|peak rss bytes total|cpu share min|output file|output bytes|output seconds):'
summary() { grep -E '^[a-z].*: ' | grep -Ev "$volatile"; }
ref=$($MPIEXEC -np 1 "$WARPSIM" run "$SPEC" --sync sequential --progress-seconds 0 --output "$TMP/seq.h5" | summary)
grep -q '^events committed: [1-9]' <<<"$ref" || { echo "FAIL: no events committed"; exit 1; }
for np in 1 2 4; do
  got=$($MPIEXEC -np "$np" "$WARPSIM" run "$SPEC" --sync optimistic --progress-seconds 0 --output "$TMP/opt.h5" \
    --overwrite --output-layout single | summary)
  if [[ "$got" != "$ref" ]]; then
    echo "FAIL: np=$np optimistic differs from sequential:"
    diff <(echo "$ref") <(echo "$got") || true
    exit 1
  fi
  groups="/series /components /summary"
  h5ls "$TMP/seq.h5" | grep -q '^jobs ' && groups="$groups /jobs /fabric"  # several jobs: per-job groups, fabric
  for g in $groups; do
    h5diff "$TMP/seq.h5" "$TMP/opt.h5" "$g" "$g" >/dev/null || { echo "FAIL: np=$np HDF5 $g differs"; exit 1; }
  done
  echo "ok np=$np optimistic: summary, digest and HDF5 identical to sequential"
done
echo "$ref" | grep -E '^(step seconds|mfu|events committed|state digest|peak memory bytes per gpu):'
