#!/usr/bin/env bash
# `warpsim run` gives the same summary (every key but the run-cost ones) and state digest for sequential,
# conservative and optimistic sync on 1, 2 and 4 ranks, what-if attribution (--attribute) included.
set -euo pipefail
WARPSIM=$1
SPEC=$2
MPIEXEC=${WARPSIM_MPIEXEC:-mpiexec --oversubscribe --allow-run-as-root}
# Keys that describe the run's cost or its configuration, not the simulated result.
volatile='^(sync|ranks|partition|events processed|events rolled back|efficiency|rollbacks|remote events|remote event fraction|event rate|wall seconds|peak rss bytes|peak rss bytes total|cpu share min):'
summary() { grep -E '^[a-z].*: ' | grep -Ev "$volatile"; }
ref=$($MPIEXEC -np 1 "$WARPSIM" run "$SPEC" --sync sequential --attribute --progress-seconds 0 | summary)
grep -q '^state digest: ' <<<"$ref" || { echo "FAIL: no state digest in: $ref"; exit 1; }
grep -q '^events committed: [1-9]' <<<"$ref" || { echo "FAIL: no events committed"; exit 1; }
# small.textproto has TP, DP, pipeline and checkpoint traffic: each gets an attribution key.
for k in tensor data pipeline; do
  grep -q "^exposed $k communication seconds: " <<<"$ref" || { echo "FAIL: no $k attribution"; exit 1; }
done
grep -q '^exposed checkpoint stall seconds: 0\.0*[1-9]' <<<"$ref" || { echo "FAIL: no checkpoint stall"; exit 1; }
for np in 1 2 4; do
  for sync in conservative optimistic; do
    got=$($MPIEXEC -np "$np" "$WARPSIM" run "$SPEC" --sync "$sync" --attribute --progress-seconds 0 | summary)
    if [[ "$got" != "$ref" ]]; then
      echo "FAIL: np=$np sync=$sync differs from sequential:"
      diff <(echo "$ref") <(echo "$got") || true
      exit 1
    fi
    echo "ok np=$np sync=$sync"
  done
done
echo "$ref" | grep -E '^(step seconds|mfu|events committed|state digest):'
