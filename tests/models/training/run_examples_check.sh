#!/usr/bin/env bash
# Every shipped experiment spec (examples/*.textproto, examples/reliability/ and the two experiments of
# examples/shared-16k/, whose third file is a job) loads, validates and sizes with `warpsim run --check`
# (the large ones are too costly to simulate in a test).
set -euo pipefail
WARPSIM=$1
EXAMPLES=$2
n=0
for spec in "$EXAMPLES"/*.textproto "$EXAMPLES"/reliability/*.textproto "$EXAMPLES"/shared-16k/two-jobs-*.textproto; do
  out=$("$WARPSIM" run "$spec" --check) || { echo "FAIL: $spec"; exit 1; }
  grep -q '^spec: ok$' <<<"$out" || { echo "FAIL: $spec: $out"; exit 1; }
  echo "ok $(basename "$spec"): $(grep -E '^(gpus|gpu ops per pipeline column):' <<<"$out" | tr '\n' ' ')"
  n=$((n + 1))
done
[[ $n -ge 1 ]] || { echo "FAIL: no examples in $EXAMPLES"; exit 1; }
