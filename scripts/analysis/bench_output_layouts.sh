#!/usr/bin/env bash
# Write time of the two results-file layouts (docs/benchmarks.md, "Commit notes, aligned records and the
# per-rank layout"): ROUNDS alternating runs of the same experiment on NP ranks with `--output-layout single`
# and `--output-layout per-rank`; prints the engine's "output seconds" (finishing the grid and the write),
# "output bytes" (every file) and the run's wall seconds per run.
# Usage: scripts/analysis/bench_output_layouts.sh path/to/warpsim [SPEC]   env: NP=2, ROUNDS=3
set -euo pipefail
WARPSIM=$1
SPEC=${2:-examples/default.textproto}
NP=${NP:-2}
ROUNDS=${ROUNDS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
value() { sed -n "s/^$1: //p" <<<"$2" | head -1; }
echo "# $(date -u '+%F %T UTC'), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg), $SPEC on $NP ranks"
echo "| round | layout | output seconds | output bytes | wall seconds |"
echo "|---|---|---|---|---|"
for ((i = 1; i <= ROUNDS; i++)); do
  for layout in single per-rank; do
    out=$(mpiexec --oversubscribe --allow-run-as-root -np "$NP" "$WARPSIM" --log-level warn run "$SPEC" \
      --progress-seconds 0 --output "$tmp/out.h5" --overwrite --output-layout "$layout")
    echo "| $i | $layout | $(value "output seconds" "$out") | $(value "output bytes" "$out") |" \
      "$(value "wall seconds" "$out") |"
  done
done
