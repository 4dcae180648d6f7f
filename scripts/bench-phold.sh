#!/usr/bin/env bash
# PHOLD benchmark: sequential, optimistic on 1 rank and optimistic on 2 ranks, at 2048 LPs in total
# (ROSS's defaults, end time 10000) and at 1M LPs in total (end time 100, to keep the run in minutes).
# Prints a markdown table (median of REPEAT runs for the small case) for docs/benchmarks.md.
# Usage: scripts/bench-phold.sh [path/to/warpsim]   (env: REPEAT=3, BIG_END_TIME=100, SKIP_BIG=0)
set -euo pipefail
WARPSIM=${1:-build/warpsim}
REPEAT=${REPEAT:-3}
BIG_END_TIME=${BIG_END_TIME:-100}
MPI=(mpiexec --oversubscribe --allow-run-as-root)

value() { printf '%s\n' "$2" | sed -n "s/^$1: //p"; }

# run_case LABEL NP ARGS... -> one table row (median by event rate)
run_case() {
  local label=$1 np=$2
  shift 2
  local rows=()
  for ((i = 0; i < REPEAT; i++)); do
    local out
    out=$("${MPI[@]}" -np "$np" "$WARPSIM" --log-level warn phold --progress-seconds 0 "$@")
    rows+=("$(value "event rate" "$out") $(value "wall seconds" "$out") $(value "efficiency" "$out") \
$(value "events committed" "$out") $(value "peak rss bytes" "$out") $(value "bytes per event" "$out") \
$(value "bytes per lp" "$out") $(value "events rolled back" "$out")")
  done
  local median
  median=$(printf '%s\n' "${rows[@]}" | sort -n | sed -n "$(((REPEAT + 1) / 2))p")
  read -r rate wall eff events rss bpe bplp rb <<<"$median"
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$label" "$np" "$events" "$rate" "$wall" "$eff" \
    "$rb" "$rss" "$bpe" "$bplp"
  echo "  command: mpiexec -np $np $WARPSIM phold $*" >&2
}

echo "| case | ranks | events committed | events/s | wall s | efficiency % | rolled back | peak RSS/rank B | B/event | B/LP |"
echo "|---|---|---|---|---|---|---|---|---|---|"
run_case "2048 LPs sequential" 1 --sync sequential --lps-per-rank 2048
run_case "2048 LPs optimistic" 1 --sync optimistic --lps-per-rank 2048
run_case "2048 LPs optimistic" 2 --sync optimistic --lps-per-rank 1024
run_case "2048 LPs conservative" 2 --sync conservative --lps-per-rank 1024
if [[ ${SKIP_BIG:-0} != 1 ]]; then
  REPEAT=1
  run_case "1M LPs sequential (end $BIG_END_TIME)" 1 --sync sequential --lps-per-rank 1048576 --end-time "$BIG_END_TIME"
  run_case "1M LPs optimistic (end $BIG_END_TIME)" 1 --sync optimistic --lps-per-rank 1048576 --end-time "$BIG_END_TIME"
  run_case "1M LPs optimistic (end $BIG_END_TIME)" 2 --sync optimistic --lps-per-rank 524288 --end-time "$BIG_END_TIME"
fi
