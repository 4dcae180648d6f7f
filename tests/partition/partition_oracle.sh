#!/usr/bin/env bash
# The oracle: a partition never changes simulation results. `warpsim run` of a small training experiment gives
# the sequential run's summary and state digest with every strategy on 2 and 4 ranks (optimistic), with a
# map file written by `warpsim partition`, and with the strategy taken from the spec (simulation.partition).
set -euo pipefail
WARPSIM=$1
SPEC=$2
MPIEXEC=${WARPSIM_MPIEXEC:-mpiexec --oversubscribe --allow-run-as-root}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# Keys that describe the run's cost or its configuration, not the simulated result.
volatile='^(sync|ranks|partition|events processed|events rolled back|efficiency|rollbacks|remote events|remote event fraction|event rate|wall seconds|peak rss bytes|peak rss bytes total|cpu share min):'
summary() { grep -E '^[a-z].*: ' | grep -Ev "$volatile"; }
value() { sed -n "s/^$1: //p" <<<"$2"; }
run() { $MPIEXEC -np "$1" "$WARPSIM" --log-level warn run "$SPEC" --progress-seconds 0 "${@:2}"; }

ref=$(run 1 --sync sequential | summary)
grep -q '^state digest: ' <<<"$ref" || { echo "FAIL: no state digest in: $ref"; exit 1; }
same() {  # same LABEL OUTPUT
  local got
  got=$(summary <<<"$2")
  if [[ "$got" != "$ref" ]]; then
    echo "FAIL: $1 differs from sequential:"
    diff <(echo "$ref") <(echo "$got") || true
    exit 1
  fi
}
for np in 2 4; do
  for strategy in block round-robin topology topology-striped metis; do
    out=$(run "$np" --sync optimistic --partition "$strategy")
    same "np=$np $strategy" "$out"
    [[ $(value partition "$out") == "$strategy" ]] || { echo "FAIL: partition key: $(value partition "$out")"; exit 1; }
    remote=$(value "remote events" "$out")
    [[ $remote -gt 0 ]] || { echo "FAIL: np=$np $strategy: no remote events"; exit 1; }
    echo "ok np=$np $strategy: remote event fraction $(value "remote event fraction" "$out")," \
      "rolled back $(value "events rolled back" "$out")"
  done
done

# A map file from `warpsim partition` (METIS, 4 ranks) runs as it is.
"$WARPSIM" partition "$SPEC" --ranks 4 --strategy metis --write-map "$TMP/metis.map" >"$TMP/report.txt"
grep -q '^edge cut: ' "$TMP/report.txt" || { echo "FAIL: no edge cut in the partition report"; exit 1; }
out=$(run 4 --sync conservative --partition-map "$TMP/metis.map")
same "map file" "$out"
[[ $(value partition "$out") == "map $TMP/metis.map" ]] || { echo "FAIL: partition key for a map file"; exit 1; }
echo "ok map file (conservative, 4 ranks)"

# The strategy from the spec; the flag overrides it.
sed -e 's/simulation { steps: 2 }/simulation { steps: 2 partition: "topology" }/' "$SPEC" >"$TMP/spec.textproto"
cmp -s "$SPEC" "$TMP/spec.textproto" && { echo "FAIL: spec rewrite did not apply"; exit 1; }
SPEC=$TMP/spec.textproto
out=$(run 2 --sync optimistic)
same "spec partition" "$out"
[[ $(value partition "$out") == topology ]] || { echo "FAIL: spec partition not used"; exit 1; }
out=$(run 2 --sync optimistic --partition round-robin)
[[ $(value partition "$out") == round-robin ]] || { echo "FAIL: --partition does not override the spec"; exit 1; }
echo "ok simulation.partition"
