#!/usr/bin/env bash
# Output overhead of `warpsim run --output` (HDF5 series, power/energy when the spec has a cost section) on
# a training experiment: PAIRS alternating pairs of the same run without and with the results file, on NP
# ranks (1 = plain process, >1 = mpiexec, optimistic). Per run: the process's wall seconds and CPU seconds
# (user + sys, /usr/bin/time; under mpiexec those of mpiexec's children too), the engine's "wall seconds"
# (simulation, recording included) and "output seconds" (finishing the grid, power series, the write), and
# the 1-minute load average before the run, and the peak resident memory of all ranks together (the report's
# "peak rss bytes total": what the series grid costs in memory). Prints a markdown table and, last, the min of each column and
# the overhead of the min with vs the min without (on a shared machine other jobs only ever add time).
# With BASE=path/to/an/older/warpsim, every pair also runs that binary (none, output) right after, so that
# before and after are measured under the same load; its rows are labelled base-none and base-output.
# Besides the min, the median over pairs of each pair's own ratio (output / none, same pair, so about
# the same load) is printed: on a loaded machine it is the steadier of the two. The last line says
# whether the issue-5 target (< 10% process wall time) is met by both (judged from 5 pairs or more).
# Usage: scripts/analysis/bench_run_output_overhead.sh path/to/warpsim [SPEC]
#   env: PAIRS=3, NP=1, BASE=, OUTPUT_ARGS= (more flags for the runs with output, e.g. --output-layout per-rank)
set -euo pipefail
WARPSIM=$1
SPEC=${2:-examples/default.textproto}
PAIRS=${PAIRS:-3}
NP=${NP:-1}
BASE=${BASE:-}
cases=(none output)
[[ -n $BASE ]] && cases+=(base-none base-output)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
value() { sed -n "s/^$1: //p" "$2" | head -1; }
if [[ $NP -gt 1 ]]; then
  launch=(mpiexec --oversubscribe --allow-run-as-root -np "$NP")
  sync=optimistic
else
  launch=()
  sync=sequential
fi
echo "# $(date -u '+%F %T UTC'), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at start"
echo "# binary $WARPSIM${BASE:+ (base: $BASE)}, spec $SPEC, $NP rank(s), --sync $sync, $PAIRS pairs${OUTPUT_ARGS:+, output: $OUTPUT_ARGS}"
echo "| pair | case | load 1 min | process s | CPU s | engine s | write s | peak RSS MB (all ranks) |"
echo "|---|---|---|---|---|---|---|---|"
declare -A proc cpu eng wr rss_of
pair_ratio=()  # per pair: process wall with output / without
base_ratio=()
for ((i = 1; i <= PAIRS; i++)); do
  for c in "${cases[@]}"; do
    extra=()
    # shellcheck disable=SC2206 # OUTPUT_ARGS is a list of flags
    [[ $c == *output ]] && extra=(--output "$tmp/out.h5" --overwrite ${OUTPUT_ARGS:-})
    bin=$WARPSIM
    [[ $c == base-* ]] && bin=$BASE
    load=$(cut -d' ' -f1 /proc/loadavg)
    /usr/bin/time -f "time: %e %U %S" -o "$tmp/time" "${launch[@]}" "$bin" run "$SPEC" --sync "$sync" \
      --progress-seconds 0 "${extra[@]}" >"$tmp/out"
    read -r e u s <<<"$(value time "$tmp/time")"
    c_s=$(echo "$u + $s" | bc -l)
    w=$(value "wall seconds" "$tmp/out")
    o=$(value "output seconds" "$tmp/out")
    o=${o:--}
    rss=$(value "peak rss bytes total" "$tmp/out")
    rss_mb=$(echo "${rss:-0} / 1000000" | bc -l)
    printf '| %d | %s | %s | %.2f | %.2f | %.3f | %s | %.1f |\n' "$i" "$c" "$load" "$e" "$c_s" "$w" "$o" "$rss_mb"
    rss_of[$c]+="$rss_mb "
    proc[$c]+="$e "
    cpu[$c]+="$c_s "
    eng[$c]+="$w "
    [[ $c == *output ]] && wr[$c]+="$o "
    [[ $c == none ]] && plain_e=$e
    [[ $c == output ]] && pair_ratio+=("$(echo "100 * ($e - $plain_e) / $plain_e" | bc -l)")
    [[ $c == base-none ]] && base_e=$e
    [[ $c == base-output ]] && base_ratio+=("$(echo "100 * ($e - $base_e) / $base_e" | bc -l)")
    [[ $c == output ]] && { bytes=$(value "output bytes" "$tmp/out"); samples=$(value "output samples" "$tmp/out"); }
    [[ $c == base-output ]] && base_bytes=$(value "output bytes" "$tmp/out")
  done
done
min() { printf '%s\n' $1 | sort -g | head -1; }
for c in "${cases[@]}"; do
  printf '| min | %s | - | %.2f | %.2f | %.3f | %s | %.1f |\n' "$c" "$(min "${proc[$c]}")" "$(min "${cpu[$c]}")" \
    "$(min "${eng[$c]}")" "$(if [[ $c == *output ]]; then min "${wr[$c]}"; else echo -; fi)" "$(min "${rss_of[$c]}")"
done
pct() { echo "100 * ($(min "$2") - $(min "$1")) / $(min "$1")" | bc -l; }
printf 'overhead of the min, process wall: %+.1f%%, CPU: %+.1f%%, engine: %+.1f%%\n' \
  "$(pct "${proc[none]}" "${proc[output]}")" "$(pct "${cpu[none]}" "${cpu[output]}")" \
  "$(pct "${eng[none]}" "${eng[output]}")"
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
min_wall=$(pct "${proc[none]}" "${proc[output]}")
med_wall=$(median "${pair_ratio[@]}")
printf 'per-pair process wall overhead: %s; median %+.1f%%\n' "$(printf '%+.1f%% ' "${pair_ratio[@]}")" "$med_wall"
echo "file: $bytes bytes, $samples samples"
verdict=$(echo "$min_wall < 10 && $med_wall < 10" | bc -l)
if ((PAIRS < 5)); then
  # Single pairs on a shared machine differ by more than the whole output cost: no verdict from so few.
  echo "issue 5 target (< 10% process wall, min and median): not judged from fewer than 5 pairs"
else
  printf 'issue 5 target (< 10%% process wall, min and median): %s\n' "$([[ $verdict == 1 ]] && echo met || echo "NOT met")"
fi
if [[ -n $BASE ]]; then
  printf 'base: overhead of the min, process wall: %+.1f%%, CPU: %+.1f%%, engine: %+.1f%%; file: %s bytes\n' \
    "$(pct "${proc[base-none]}" "${proc[base-output]}")" "$(pct "${cpu[base-none]}" "${cpu[base-output]}")" \
    "$(pct "${eng[base-none]}" "${eng[base-output]}")" "$base_bytes"
  printf 'base: per-pair process wall overhead: %s; median %+.1f%%\n' "$(printf '%+.1f%% ' "${base_ratio[@]}")" \
    "$(median "${base_ratio[@]}")"
fi
