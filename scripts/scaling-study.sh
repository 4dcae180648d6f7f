#!/usr/bin/env bash
# Strong-scaling study (docs/scale.md): runs each training spec at each rank count, one after the other,
# and collects wall time, committed events per second, speedup and efficiency against the 1-rank run,
# and peak RSS per rank (the report's `peak rss bytes`: the largest rank) next to the RSS floor of an MPI
# process that only parses the spec (`warpsim run --check` under /usr/bin/time on every rank). Writes
# OUTDIR/scaling.csv, then scripts/analysis/scaling_plot.py turns it into OUTDIR/scaling.md (table) and
# OUTDIR/scaling.png (wall, events/s, efficiency, peak RSS per rank).
#
# Usage: scripts/scaling-study.sh path/to/warpsim [OUTDIR] [SPEC...]
#   RANKS="1 2 4 8 16"     rank counts; default: those of 1 2 4 8 16 that do not exceed the CPUs (nproc)
#   BUDGET=3000            wall-clock seconds for the whole study: each run gets at most what is left (and
#                          RUN_TIMEOUT); runs that find no budget left are recorded with status "skipped"
#   ONE_RANK_SYNC=sequential  sync mode of the 1-rank baseline (sequential: the fastest 1-rank run, the
#                          honest base for efficiency; "optimistic" measures Time Warp's own overhead)
#   SYNC=optimistic        sync mode with more than one rank
#   PARTITION=block        --partition for every run
#   RUN_TIMEOUT=900        seconds per run; a run that times out is recorded with status "timeout"
# Per run the CSV also has the events processed and rolled back, the rollback share (rolled back /
# processed), the engine's efficiency and `cpu share min` (the rank that got least of a CPU: below ~0.8 the
# node was shared and the timing says more about the node than the engine).
#   EXTRA_ARGS=""          more `warpsim run` flags (e.g. "--optimism-window 1e6")
# Default specs: the 16k and 100k examples. Timings are only comparable on an otherwise idle machine: the
# 1-minute load average before each run is recorded next to it.
set -euo pipefail
WARPSIM=${1:?usage: $0 path/to/warpsim [outdir] [spec...]}
OUT=${2:-scaling-out}
shift $(( $# >= 2 ? 2 : 1 ))
SPECS=("$@")
[[ ${#SPECS[@]} -gt 0 ]] || SPECS=(examples/llama405b-16kxh100.textproto examples/llama405b-100kxh100.textproto)
if [[ -z ${RANKS:-} ]]; then
  RANKS=""
  for n in 1 2 4 8 16; do ((n <= $(nproc))) && RANKS="$RANKS $n"; done
fi
BUDGET=${BUDGET:-3000}
study_start=$(date +%s)
MPIEXEC=${WARPSIM_MPIEXEC:-mpiexec --oversubscribe --allow-run-as-root}
# The study measures the engine on N ranks: keep every rank even where the node is busy (warpsim would
# otherwise simulate on fewer ranks, docs/running.md "Shared nodes"); `cpu share min` shows the load.
export WARPSIM_SHARED_NODE=${WARPSIM_SHARED_NODE:-keep}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
csv="$OUT/scaling.csv"
tmp="$csv.tmp.$$"
trap 'rm -f "$tmp"' EXIT
value() { sed -n "s/^$1: //p" <<<"$2" | head -1; }
echo "spec,experiment,ranks,sync,status,events_committed,wall_seconds,committed_events_per_second,peak_rss_bytes_max,peak_rss_bytes_total,rss_floor_bytes_max,load_1min,step_seconds,state_digest,events_processed,events_rolled_back,rollback_share,engine_efficiency,cpu_share_min" >"$tmp"
for spec in "${SPECS[@]}"; do
  for np in $RANKS; do
    sync=${SYNC:-optimistic}
    [[ $np == 1 ]] && sync=${ONE_RANK_SYNC:-sequential}
    # The floor: every rank parses the spec and builds the job, nothing more.
    left=$((BUDGET - ($(date +%s) - study_start)))
    if ((left < 5)); then
      echo "== $spec ranks=$np: skipped, the study's budget of $BUDGET s is spent" >&2
      echo "$spec,,$np,$sync,skipped,,,,,,,,,,,,,," >>"$tmp"
      continue
    fi
    # Each rank's figure goes to its own file (ranks writing to one stream can interleave).
    rm -f "$OUT"/.floor.*
    $MPIEXEC -np "$np" bash -c '/usr/bin/time -f %M -o "$0.${OMPI_COMM_WORLD_RANK:-0}" "$@" >/dev/null' \
      "$OUT/.floor" "$WARPSIM" --log-level warn run "$spec" --check
    floor_kb=$(cat "$OUT"/.floor.* | sort -n | tail -1)
    rm -f "$OUT"/.floor.*
    load=$(cut -d' ' -f1 /proc/loadavg)
    log="$OUT/$(basename "$spec" .textproto)-np$np-$sync.log"
    echo "== $spec ranks=$np sync=$sync (load $load)" >&2
    status=ok
    # shellcheck disable=SC2086  # EXTRA_ARGS is a list of flags
    run_timeout=${RUN_TIMEOUT:-900}
    ((left < run_timeout)) && run_timeout=$left
    timeout "$run_timeout" $MPIEXEC -np "$np" "$WARPSIM" --log-level warn run "$spec" --sync "$sync" \
      --partition "${PARTITION:-block}" --progress-seconds 0 ${EXTRA_ARGS:-} >"$log" 2>&1 || status=$?
    [[ $status == 124 ]] && status=timeout
    r=$(cat "$log")
    committed=$(value "events committed" "$r")
    wall=$(value "wall seconds" "$r")
    processed=$(value "events processed" "$r")
    rolled=$(value "events rolled back" "$r")
    share=""
    [[ -n $processed && -n $rolled && $processed != 0 ]] &&
      share=$(awk -v r="$rolled" -v p="$processed" 'BEGIN { printf "%.4f", r / p }')
    rate=""
    [[ -n $committed && -n $wall ]] && rate=$(awk -v e="$committed" -v w="$wall" 'BEGIN { printf "%.0f", e / w }')
    echo "$spec,$(value experiment "$r"),$np,$sync,$status,$committed,$wall,$rate,$(value "peak rss bytes" "$r")," \
      "$(value "peak rss bytes total" "$r"),$((${floor_kb:-0} * 1024)),$load,$(value "step seconds" "$r")," \
      "$(value "state digest" "$r"),$processed,$rolled,$share,$(value efficiency "$r"),$(value "cpu share min" "$r")" |
      tr -d ' ' >>"$tmp"
  done
done
mv "$tmp" "$csv"
/usr/bin/python3 "$HERE/analysis/scaling_plot.py" "$csv" --out "$OUT"
