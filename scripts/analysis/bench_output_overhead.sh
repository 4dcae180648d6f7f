#!/usr/bin/env bash
# Output overhead of PHOLD's HDF5 series: the same run without --output, with --output (deflate 1, the
# default) and with --output --compression 0, on 1 and 2 ranks. Run time = the engine's "wall seconds"
# (simulation, including the commit-time recording) + "output seconds" (the collective write and rename);
# MPI start-up is left out because on a shared machine it is noise larger than the effect. On 1 rank the
# process's CPU time (user + sys, from /usr/bin/time; warpsim runs as an MPI singleton) is reported too: it is
# far less disturbed by other users of a shared machine than wall time.
# Prints markdown rows (STAT = median or min of REPEAT runs, cases interleaved) for docs/benchmarks.md; the
# minimum is the better estimate on a machine shared with other jobs (they only ever add time).
# Usage: scripts/analysis/bench_output_overhead.sh [path/to/warpsim]
#   env: REPEAT=5, INTERVAL=100 (time units; 10000 / INTERVAL samples), STAT=median|min, NPS="1 2"
set -euo pipefail
WARPSIM=${1:-build/warpsim}
REPEAT=${REPEAT:-5}
INTERVAL=${INTERVAL:-100}
STAT=${STAT:-median}
NPS=${NPS:-1 2}
MPI=(mpiexec --oversubscribe --allow-run-as-root)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

value() { printf '%s\n' "$2" | sed -n "s/^$1: //p"; }
median() {
  if [[ $STAT == min ]]; then sort -g | head -1; else sort -g | sed -n "$(((REPEAT + 1) / 2))p"; fi
}

echo "| ranks | LPs | samples | case | run s ($STAT) | of which write s | overhead % (run) | CPU s ($STAT) | overhead % (CPU) | file bytes | bytes/component-sample |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for np in $NPS; do
  per=$((2048 / np))
  base=(phold --progress-seconds 0 --sync optimistic --lps-per-rank "$per")
  declare -A runs=() writes=() bytes=() cpus=()
  samples=0
  for ((i = 0; i < REPEAT; i++)); do
    for c in none deflate1 plain; do
      extra=()
      [[ $c != none ]] && extra=(--output "$tmp/out.h5" --overwrite --sample-interval "$INTERVAL")
      [[ $c == plain ]] && extra+=(--compression 0)
      if [[ $np -eq 1 ]]; then
        out=$(/usr/bin/time -f "cpu: %U %S" "$WARPSIM" --log-level warn "${base[@]}" "${extra[@]}" 2>&1)
        read -r user sys <<<"$(value "cpu" "$out")"
        cpus[$c]+="$(echo "$user + $sys" | bc -l) "
      else
        out=$("${MPI[@]}" -np "$np" "$WARPSIM" --log-level warn "${base[@]}" "${extra[@]}")
      fi
      wall=$(value "wall seconds" "$out")
      write=$(value "output seconds" "$out")
      write=${write:-0}
      runs[$c]+="$(echo "$wall + $write" | bc -l) "
      writes[$c]+="$write "
      if [[ $c != none ]]; then
        bytes[$c]=$(value "output bytes" "$out")
        samples=$(value "output samples" "$out")
      fi
    done
  done
  ref=$(printf '%s\n' ${runs[none]} | median)
  cpu_ref=$(printf '%s\n' ${cpus[none]:-0} | median)
  for c in none deflate1 plain; do
    run=$(printf '%s\n' ${runs[$c]} | median)
    write=$(printf '%s\n' ${writes[$c]} | median)
    over=$(echo "100 * ($run - $ref) / $ref" | bc -l)
    cpu="-" cpu_over="-"
    if [[ $np -eq 1 ]]; then
      cpu=$(printf '%s\n' ${cpus[$c]} | median)
      cpu_over=$(printf '%.1f' "$(echo "100 * ($cpu - $cpu_ref) / $cpu_ref" | bc -l)")
    fi
    if [[ $c == none ]]; then
      printf '| %s | 2048 | - | no --output | %.3f | - | - | %s | - | - | - |\n' "$np" "$run" "$cpu"
    else
      per_cs=$(echo "${bytes[$c]} / (2048 * $samples)" | bc -l)
      printf '| %s | 2048 | %s | --output (%s) | %.3f | %.3f | %.1f | %s | %s | %s | %.2f |\n' "$np" "$samples" "$c" \
        "$run" "$write" "$over" "$cpu" "$cpu_over" "${bytes[$c]}" "$per_cs"
    fi
  done
  unset runs writes bytes cpus
done
