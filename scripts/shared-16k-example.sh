#!/usr/bin/env bash
# The worked example of docs/shared-clusters.md (issue #26): two 8192-GPU Llama-3-70B-like jobs on one
# 16,384-GPU fabric, packet fidelity, one step. For each fabric of examples/shared-16k/ (non-blocking with
# the jobs packed in their own pods; leaves oversubscribed 3:1 with both jobs spread) it runs job a alone
# (the spec without job b: the same GPUs) and both jobs together, each with --output, then prints the step
# times and the leaf up-port utilization and plots them (scripts/analysis/shared_fabric_plot.py).
# Four sequential runs of 4-8 minutes each on one core; RANKS=N runs them on N optimistic MPI ranks instead
# (the results are the same).
# Usage: scripts/shared-16k-example.sh path/to/warpsim OUT_DIR [PLOT_PREFIX]
#   OUT_DIR must not exist (results are never overwritten); PLOT_PREFIX defaults to OUT_DIR/shared-16k.
set -euo pipefail
WARPSIM=$(realpath "${1:?usage: $0 path/to/warpsim OUT_DIR [PLOT_PREFIX]}")
OUT=${2:?usage: $0 path/to/warpsim OUT_DIR [PLOT_PREFIX]}
PLOT=${3:-$OUT/shared-16k}
HERE=$(cd "$(dirname "$0")" && pwd)
EXAMPLES=$HERE/../examples/shared-16k
if [[ -e $OUT ]]; then
  echo "shared-16k-example.sh: error: $OUT exists (results are never overwritten)" >&2
  exit 2
fi
mkdir -p "$OUT"
cp "$EXAMPLES"/*.textproto "$OUT/"

run() {  # run SPEC NAME: writes OUT/NAME.h5 and OUT/NAME.txt
  local cmd=("$WARPSIM" run "$1" --output "$OUT/$2.h5" --progress-seconds 60)
  if [[ ${RANKS:-1} -gt 1 ]]; then
    cmd=(mpiexec -np "$RANKS" "${cmd[@]}")
  else
    cmd+=(--sync sequential)
  fi
  local t0=$SECONDS
  "${cmd[@]}" >"$OUT/$2.txt"
  echo "$2: $((SECONDS - t0)) s wall, $(grep -E '^(job a step seconds|job b step seconds|fabric leaf uplink utilization|state digest):' "$OUT/$2.txt" | tr '\n' ' ')"
}

cases=()
for fabric in nonblocking oversubscribed; do
  spec=$OUT/two-jobs-16k-$fabric.textproto
  grep -v 'name: "b"' "$spec" >"$OUT/alone-16k-$fabric.textproto"
  run "$OUT/alone-16k-$fabric.textproto" "alone-$fabric"
  run "$spec" "shared-$fabric"
  cases+=("$fabric=$OUT/alone-$fabric.h5,$OUT/shared-$fabric.h5")
done
/usr/bin/python3 "$HERE/analysis/shared_fabric_plot.py" "$PLOT" "${cases[@]}"
echo "plots: $PLOT-steps.png $PLOT-uplinks.png"
