#!/usr/bin/env bash
# Paired A/B timing with public tools, the protocol docs/benchmarks.md uses for engine and model changes:
# command A and command B run in turn (A B A B ...) N times after one uncounted warm-up each, and the ratio
# A/B is taken pair by pair, so that a machine whose speed drifts during the call (a shared host) moves both
# halves of a pair alike. Prints wall seconds of A and of B and the ratio A/B as min / median / max; quote
# the median. No verdict: on a noisy 2-core machine a ratio within its min-max spread of 1 is no result.
#
# Usage: N=8 bash scripts/ab-pairs.sh 'COMMAND A' 'COMMAND B'
#   e.g. N=8 bash scripts/ab-pairs.sh 'mpiexec -np 2 NEW/warpsim run examples/default.textproto' \
#                                     'mpiexec -np 2 OLD/warpsim run examples/default.textproto'
# Each command runs under `bash -c`, its output goes to /dev/null (LOG=FILE keeps it); a run that exits
# non-zero stops the script with its exit code (a timing of a failed run means nothing).
set -euo pipefail
if [[ $# -ne 2 ]]; then
  echo "usage: N=RUNS $0 'COMMAND A' 'COMMAND B'" >&2
  exit 2
fi
A=$1
B=$2
N=${N:-5}
LOG=${LOG:-/dev/null}
[[ $N =~ ^[1-9][0-9]*$ ]] || { echo "N: '$N' is not a positive number of runs" >&2; exit 2; }

run_once() {  # prints the wall seconds of one run of "$1"
  local start end rc=0
  start=$(date +%s.%N)
  bash -c "$1" >>"$LOG" 2>&1 || rc=$?
  end=$(date +%s.%N)
  if [[ $rc -ne 0 ]]; then
    echo "ab-pairs: '$1' exited with $rc" >&2
    exit "$rc"
  fi
  awk -v s="$start" -v e="$end" 'BEGIN { printf "%.3f\n", e - s }'
}

stats() {  # min / median / max of the numbers on stdin
  sort -g | awk '{ v[NR] = $1 } END {
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%.3f / %.3f / %.3f\n", v[1], m, v[NR] }'
}

run_once "$A" >/dev/null  # warm-ups (page cache, first-touch start-up), not counted
run_once "$B" >/dev/null
a_times=() b_times=() ratios=()
for ((i = 1; i <= N; ++i)); do
  ta=$(run_once "$A")
  tb=$(run_once "$B")
  a_times+=("$ta")
  b_times+=("$tb")
  ratios+=("$(awk -v a="$ta" -v b="$tb" 'BEGIN { printf "%.4f\n", a / b }')")
  echo "pair $i/$N: A $ta s, B $tb s" >&2
done
echo "runs: $N pairs, A and B in turn"
echo "A wall s (min / median / max): $(printf '%s\n' "${a_times[@]}" | stats)"
echo "B wall s (min / median / max): $(printf '%s\n' "${b_times[@]}" | stats)"
echo "A/B wall (min / median / max): $(printf '%s\n' "${ratios[@]}" | stats)"
