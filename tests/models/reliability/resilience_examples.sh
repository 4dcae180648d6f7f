#!/usr/bin/env bash
# The shipped failure examples (examples/reliability/) run as docs/energy-cost.md ("Failures simulated inside
# the run") describes them: the figures the section quotes are what `warpsim run` prints, so the docs cannot
# drift from the code. Args: path/to/warpsim source-root.
set -euo pipefail
WARPSIM=$1
ROOT=$2
value() { sed -n "s/^$1: //p" <<<"$2"; }
check() {  # check SPEC KEY EXPECTED...
  local spec=$1 out
  shift
  out=$("$WARPSIM" run "$ROOT/examples/reliability/$spec" --sync sequential --progress-seconds 0)
  while (($#)); do
    [[ $(value "$1" "$out") == "$2" ]] || { echo "FAIL: $spec: '$1' is $(value "$1" "$out"), the docs say $2"; exit 1; }
    shift 2
  done
  echo "ok $spec: $(grep -E '^(simulated failures|simulated goodput|analytic goodput):' <<<"$out" | tr '\n' ' ')"
}
check failures-llama3-rates-64xh100.textproto 'simulated failure system mtbf hours' 730.788 \
  'simulated failures' 7 'simulated goodput' 0.9983 'analytic goodput' 0.9984 'analytic failures' 6.0
check failures-day-16krate-64xh100.textproto 'simulated failure system mtbf hours' 3.093 \
  'simulated failures' 9 'simulated goodput' 0.8845 'analytic goodput' 0.8720 'analytic failures' 7.8 \
  'step seconds without checkpoints' 0.470465 'checkpoint seconds' 1.862649
