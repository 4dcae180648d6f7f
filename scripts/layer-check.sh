#!/usr/bin/env bash
# Layer-level check of the compute and NVLink models (docs/validation.md, "Layer-level check"): one
# transformer layer of Korthikanti et al. 2022's 22B model on one DGX A100 (TP 8, micro-batch 4), against the
# paper's Table 4, all five rows (no recomputation 19.6 ms, sequence parallelism 19.0, full recomputation 27.2,
# selective 20.9, selective + sequence parallelism 20.3; tensor-parallel communication included). warpsim's layer time = (step(48 layers) - step(24 layers)) / 24 less
# the layer's share of the optimizer step (the same difference of `warpsim estimate`'s optimizer seconds):
# embedding, loss and fixed costs cancel. Prints one Markdown row per case; with MAX_ABS_ERROR=F set, exits
# 1 when a case's |error| exceeds F (the CI regression test).
# Usage: scripts/layer-check.sh path/to/warpsim
set -euo pipefail
WARPSIM=${1:?usage: $0 path/to/warpsim}
HERE=$(cd "$(dirname "$0")" && pwd)
TEMPLATE=$HERE/data/korthikanti-22b-layer.textproto
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# step LAYERS RECOMPUTE SEQUENCE_PARALLEL -> "step_seconds optimizer_seconds"
step() {
  local spec=$tmp/l$1-$2-$3.textproto
  sed -e "s/NUM_LAYERS/$1/" -e "s/RECOMPUTE/$2/" -e "s/SEQUENCE_PARALLEL/$3/" "$TEMPLATE" >"$spec"
  local run est
  run=$("$WARPSIM" --log-level warn run --sync sequential --progress-seconds 0 "$spec")
  est=$("$WARPSIM" --log-level warn estimate "$spec")
  echo "$(sed -n 's/^step seconds: //p' <<<"$run") $(sed -n 's/^optimizer seconds: //p' <<<"$est")"
}

echo "| case | Table 4 ms | warpsim ms | error (time) |"
echo "|---|---|---|---|"
status=0
# Table 4's rows: recomputation, sequence parallelism, reference ms, label.
cases=("NONE false 19.6 no recomputation (7.7 + 11.9)"
  "NONE true 19.0 sequence parallelism (7.2 + 11.8)"
  "FULL false 27.2 full recomputation (7.7 + 19.5)"
  "SELECTIVE false 20.9 selective recomputation (7.7 + 13.2)"
  "SELECTIVE true 20.3 selective + sequence parallelism (7.2 + 13.1)")
for c in "${cases[@]}"; do
  read -r mode sp ref label <<<"$c"
  read -r s24 o24 <<<"$(step 24 "$mode" "$sp")"
  read -r s48 o48 <<<"$(step 48 "$mode" "$sp")"
  row=$(awk -v a="$s24" -v b="$s48" -v oa="$o24" -v ob="$o48" -v r="$ref" -v l="$label" -v m="${MAX_ABS_ERROR:-}" 'BEGIN {
    ms = ((b - a) - (ob - oa)) / 24 * 1000; e = (ms - r) / r
    printf "| %s | %.1f | %.2f | %+.1f%% |", l, r, ms, 100 * e
    if (m != "" && (e > m || -e > m)) exit 1 }') || status=1
  echo "$row"
done
exit $status
