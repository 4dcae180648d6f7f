#!/usr/bin/env bash
# A sweep ranks experiments by cost and carbon: the index carries the economics keys, slower stragglers
# cost more per token, a dirtier grid emits more per token at the same cost.
set -euo pipefail
WARPSIM=$1
SWEEP=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
"$WARPSIM" sweep "$SWEEP" --out "$TMP/out" --jobs 2 >/dev/null 2>&1
csv=$TMP/out/index.csv
col() { head -1 "$csv" | tr ',' '\n' | grep -nx "$1" | cut -d: -f1; }
for c in goodput it_energy_joules_per_token cost_usd_per_million_tokens carbon_kgco2e_per_million_tokens \
         training_run_cost_usd; do
  [[ -n $(col "$c") ]] || { echo "FAIL: no column $c in the index"; exit 1; }
done
cost=$(col cost_usd_per_million_tokens)
carbon=$(col carbon_kgco2e_per_million_tokens)
# Rows: 0 = slowdown 1 / 50 g, 1 = slowdown 1 / 800 g, 2 = slowdown 2 / 50 g, 3 = slowdown 2 / 800 g.
by_cost=$(tail -n +2 "$csv" | sort -t, -k"$cost","$cost"g -k1,1n | cut -d, -f1 | tr '\n' ' ')
by_carbon=$(tail -n +2 "$csv" | sort -t, -k"$carbon","$carbon"g | cut -d, -f1 | tr '\n' ' ')
echo "by cost: $by_cost; by carbon: $by_carbon"
[[ "$by_cost" == "0 1 2 3 " ]] || { echo "FAIL: cost ranking $by_cost"; exit 1; }
[[ "$by_carbon" == "0 2 1 3 " ]] || { echo "FAIL: carbon ranking $by_carbon"; exit 1; }
awk -F, -v c="$cost" 'NR == 2 { a = $c } NR == 4 { b = $c } END { exit !(b > a) }' "$csv" ||
  { echo "FAIL: stragglers did not raise the cost per token"; exit 1; }
echo "ok"
