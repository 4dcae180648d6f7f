#!/usr/bin/env bash
# `warpsim run` with cost and reliability sections as users run it:
#  - the energy/cost/carbon/goodput keys are printed and are identical (with every other simulated key) for
#    sequential and for conservative/optimistic on 2 ranks, stragglers and failures enabled;
#  - straggler GPUs lengthen the simulated step of the synchronous data-parallel job; slowdown 1 does not;
#  - the energy keys agree with each other (per step x steps / run time = average power).
set -euo pipefail
WARPSIM=$1
SPEC=$2
MPIEXEC=${WARPSIM_MPIEXEC:-mpiexec --oversubscribe --allow-run-as-root}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
volatile='^(sync|ranks|partition|events processed|events rolled back|efficiency|rollbacks|remote events|remote event fraction|event rate|wall seconds|peak rss bytes|peak rss bytes total|cpu share min):'
summary() { grep -E '^[a-z].*: ' | grep -Ev "$volatile"; }
value() { sed -n "s/^$1: //p" <<<"$2"; }

ref=$($MPIEXEC -np 1 "$WARPSIM" run "$SPEC" --sync sequential --progress-seconds 0 | summary)
for k in 'straggler gpus' 'goodput' 'optimal checkpoint interval seconds' 'young checkpoint interval seconds' \
         'monte carlo goodput' 'it energy joules per step' 'cost usd per step' 'cost usd per million tokens' \
         'operating kgco2e per step' 'embodied kgco2e per step' 'training run cost usd' \
         'checkpoint seconds source'; do
  grep -q "^$k: " <<<"$ref" || { echo "FAIL: no '$k' key in: $ref"; exit 1; }
done
[[ $(value 'checkpoint seconds source' "$ref") == simulated ]] || { echo "FAIL: checkpoint not measured"; exit 1; }
awk -v c="$(value 'checkpoint seconds' "$ref")" 'BEGIN { exit !(c > 0) }' || { echo "FAIL: checkpoint 0"; exit 1; }
for sync in conservative optimistic; do
  got=$($MPIEXEC -np 2 "$WARPSIM" run "$SPEC" --sync "$sync" --progress-seconds 0 | summary)
  if [[ "$got" != "$ref" ]]; then
    echo "FAIL: np=2 sync=$sync differs from sequential:"
    diff <(echo "$ref") <(echo "$got") || true
    exit 1
  fi
  echo "ok np=2 sync=$sync"
done

# Energy keys are consistent: average power x step time = energy per step (within print rounding).
awk -v p="$(value 'average it power kw' "$ref")" -v s="$(value 'step seconds' "$ref")" \
    -v e="$(value 'it energy joules per step' "$ref")" \
    'BEGIN { d = p * 1000 * s - e; if (d < 0) d = -d; exit !(d <= 0.002 * e) }' ||
  { echo "FAIL: power x step time != energy per step"; exit 1; }

# Stragglers: the same experiment without slow GPUs, and with slow GPUs that are not slower.
sed -e 's/gpu_fraction: 0.125/gpu_fraction: 0/' "$SPEC" >"$TMP/none.textproto"
sed -e 's/slowdown: 1.5/slowdown: 1/' "$SPEC" >"$TMP/unit.textproto"
none=$("$WARPSIM" run "$TMP/none.textproto" --sync sequential --progress-seconds 0)
unit=$("$WARPSIM" run "$TMP/unit.textproto" --sync sequential --progress-seconds 0)
with=$(value 'step seconds without checkpoints' "$ref")
without=$(value 'step seconds without checkpoints' "$none")
[[ $(value 'step seconds without checkpoints' "$unit") == "$without" ]] ||
  { echo "FAIL: slowdown 1 changed the step"; exit 1; }
awk -v a="$with" -v b="$without" 'BEGIN { exit !(a > b * 1.05) }' ||
  { echo "FAIL: stragglers did not lengthen the step ($with vs $without)"; exit 1; }
grep -q '^straggler gpus: ' <<<"$none" && { echo "FAIL: straggler keys without stragglers"; exit 1; }
echo "ok stragglers: step $with s with 2 of 16 GPUs 1.5x slower, $without s without"
echo "$ref" | grep -E '^(step seconds|goodput|it energy joules per step|cost usd per step|state digest):'
