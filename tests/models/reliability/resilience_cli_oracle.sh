#!/usr/bin/env bash
# `warpsim run` with reliability.simulate_failures as users run it: the simulated keys (and every other
# simulated key) and the resilience run's digest are identical for sequential and for optimistic on 1, 2 and
# 4 ranks and conservative on 2; the results files are identical (h5diff of /series, /components, /summary
# and the /resilience tables).
# Args: path/to/warpsim spec. Env: WARPSIM_MPIEXEC.
source "$(dirname "$0")/../../jobs/cli/lib.sh"
SPEC=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
volatile='^(sync|ranks|partition|events processed|events rolled back|efficiency|rollbacks|remote events|remote event fraction|event rate|wall seconds|peak rss bytes|peak rss bytes total|cpu share min|simulated failure wall seconds|output [a-z ]*):'
summary() { grep -E '^[a-z].*: ' | grep -Ev "$volatile"; }

ref_full=$(run_np 1 run "$SPEC" --sync sequential --progress-seconds 0 --output "$tmp/seq.h5")
ref=$(summary <<<"$ref_full")
for k in 'simulated failures' 'simulated correlated repeats' 'simulated goodput' 'simulated lost work hours' \
         'simulated restart hours' 'simulated checkpoint hours' 'simulated steps' 'analytic goodput' \
         'monte carlo horizon goodput' 'simulated failure digest' 'simulated restarts waiting for repair' \
         'simulated repair wait hours'; do
  grep -q "^$k: " <<<"$ref" || fail "no '$k' key in: $ref"
done
failures=$(value 'simulated failures' "$ref")
[[ $failures -ge 5 ]] || fail "only $failures failures in the simulated day: the test would prove little"
# The tables: one failure row per simulated failure, progress rows ending at the simulated steps.
rows=$(h5dump -H -d /resilience/failures/time_s "$tmp/seq.h5" | sed -n 's/.*DATASPACE  SIMPLE { ( \([0-9]*\) ).*/\1/p')
[[ $rows == "$failures" ]] || fail "/resilience/failures has $rows rows, the report $failures failures"

same_results() {
  local g
  for g in /series /components /summary /resilience; do h5diff "$1" "$2" "$g" "$g" >/dev/null || return 1; done
}
# Negative control: another seed gives other failures, so h5diff must see a difference.
run_np 1 run "$SPEC" --sync sequential --seed 2 --progress-seconds 0 --output "$tmp/other.h5" >/dev/null
! same_results "$tmp/seq.h5" "$tmp/other.h5" || fail "h5diff does not see a different seed"

for case in "1 optimistic block" "2 optimistic block" "4 optimistic block" "4 optimistic round-robin" \
  "2 conservative block"; do
  read -r np sync part <<<"$case"
  full=$(run_np "$np" run "$SPEC" --sync "$sync" --partition "$part" --progress-seconds 0 --output "$tmp/run.h5" \
    --overwrite)
  got=$(summary <<<"$full")
  if [[ "$got" != "$ref" ]]; then
    diff <(echo "$ref") <(echo "$got") || true
    fail "$case: the summary differs from the sequential run"
  fi
  same_results "$tmp/seq.h5" "$tmp/run.h5" || fail "$case: /summary or /resilience differs from the sequential run"
  echo "ok $sync/$part np=$np ($(value ranks "$full") ranks): summary, digest and /resilience identical"
done
grep -E '^(simulated failures|simulated correlated repeats|simulated goodput|analytic goodput|simulated failure digest):' <<<"$ref"
