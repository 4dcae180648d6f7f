#!/usr/bin/env bash
# The shipped failure examples (examples/reliability/) run as docs/energy-cost.md ("Failures simulated inside
# the run") describes them: the figures the section quotes are what `warpsim run` prints, so the docs cannot
# drift from the code. Args: path/to/warpsim source-root.
set -euo pipefail
WARPSIM=$1
ROOT=$2
value() { sed -n "s/^$1: //p" <<<"$2"; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
check() {  # check SPEC KEY EXPECTED... (SPEC under examples/reliability/, or a path)
  local spec=$1 out
  shift
  [[ -f $spec ]] || spec=$ROOT/examples/reliability/$spec
  out=$("$WARPSIM" run "$spec" --sync sequential --progress-seconds 0)
  while (($#)); do
    [[ $(value "$1" "$out") == "$2" ]] || { echo "FAIL: $spec: '$1' is $(value "$1" "$out"), the docs say $2"; exit 1; }
    shift 2
  done
  echo "ok $spec: $(grep -E '^(simulated failures|simulated goodput|analytic goodput):' <<<"$out" | tr '\n' ' ')"
}
check failures-llama3-rates-64xh100.textproto 'simulated failure system mtbf hours' 730.788 \
  'simulated failures' 7 'simulated goodput' 0.9982 'analytic goodput' 0.9984 'analytic failures' 6.0
check failures-day-16krate-64xh100.textproto 'simulated failure system mtbf hours' 3.093 \
  'simulated failures' 9 'simulated goodput' 0.8794 'analytic goodput' 0.8724 'analytic failures' 7.8 \
  'step seconds without checkpoints' 0.467479 'checkpoint seconds' 1.862649
# The 5000-hour variants the section's tables quote: Daly's case, correlated repeats, two spares.
day=$ROOT/examples/reliability/failures-day-16krate-64xh100.textproto
variant() { sed "s/simulate_failures { hours: 24 }/simulate_failures { hours: 5000 $2 }/" "$day" >"$TMP/$1.textproto"; }
variant daly ""
variant correlated "correlated { probability: 0.3 within_hours: 1 }"
variant spares "spare_nodes: 2 repair_hours: 4"
check "$TMP/daly.textproto" 'simulated failures' 1620 'simulated goodput' 0.8720 'analytic goodput' 0.8724 \
  'monte carlo horizon goodput' 0.8723 'simulated lost work hours' 372.105 'simulated failure digest' 4919f48a058be4d7
check "$TMP/correlated.textproto" 'simulated failures' 2211 'simulated correlated repeats' 630 \
  'simulated goodput' 0.8378 'simulated failures during restarts' 248
check "$TMP/spares.textproto" 'simulated failures' 1620 'simulated goodput' 0.7777 \
  'simulated restarts waiting for repair' 287 'simulated repair wait hours' 539.551
