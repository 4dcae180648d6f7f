#!/usr/bin/env bash
# Shared-core benchmark (issue #23, docs/scale.md "Shared cores"): how 2 optimistic ranks fare against the
# sequential run when another CPU-bound process shares the node, as on any shared login or compute node.
# For each workload it runs, with a bounded CPU-bound "hog" process beside it: the sequential run, then 2
# optimistic ranks with default engine settings; and, for reference, 2 ranks on the quiet machine. It prints
# one Markdown row per workload: wall times (the engine's `wall seconds`), the ratio 2 ranks / sequential
# (the acceptance bar is <= 1.1), the whole command's seconds and ratio (MPI start-up and the shared-node
# probe included), how many ranks simulated (default `--shared-node shrink`: 1 beside a busy core),
# efficiency, rollback share, the smallest per-rank CPU share, and whether the state digests agree.
#
# Usage: scripts/bench-shared-core.sh [path/to/warpsim] [OUTDIR]
#   HOG_DUTY=100     percent of one core the hog keeps busy (100 = a plain busy loop; below 100 it alternates
#                    busy and sleeping in 10 ms periods). It is started before each measured run and
#                    killed after it, and bounded by HOG_SECONDS (default 900) in any case.
#   WORKLOADS="phold default llama70b"   which rows to run:
#     phold     PHOLD with ROSS's settings (2048 LPs in total, end time 10000, remote 0.25)
#     default   examples/default.textproto (the main job)
#     llama70b  examples/llama2-70b-64xh100-packet.textproto (64-GPU Llama-2-70B-like, 1 MiB packets)
#   EXTRA_ARGS=""    more engine flags for the 2-rank runs (to try a setting; the bar is for defaults)
#   RUN_TIMEOUT=300  seconds per run; a run that times out shows as "timeout"
# Logs of every run go to OUTDIR (default shared-core-out). Timings mean something only on an otherwise idle
# machine: the 1-minute load average before the first run is printed.
set -euo pipefail
WARPSIM=${1:-build/warpsim}
OUT=${2:-shared-core-out}
HOG_DUTY=${HOG_DUTY:-100}
HOG_SECONDS=${HOG_SECONDS:-900}
WORKLOADS=${WORKLOADS:-phold default llama70b}
RUN_TIMEOUT=${RUN_TIMEOUT:-300}
MPIEXEC=${WARPSIM_MPIEXEC:-mpiexec --oversubscribe --allow-run-as-root}
HERE=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT"
[[ $HOG_DUTY =~ ^[0-9]+$ && $HOG_DUTY -ge 1 && $HOG_DUTY -le 100 ]] ||
  { echo "bench-shared-core: HOG_DUTY must be an integer percent in 1..100 (got '$HOG_DUTY')" >&2; exit 2; }

hog_pid=""
start_hog() {
  if [[ $HOG_DUTY == 100 ]]; then
    timeout "$HOG_SECONDS" bash -c 'while :; do :; done' &
  else
    # Busy for duty% of each 10 ms period, asleep for the rest.
    timeout "$HOG_SECONDS" python3 -c '
import sys, time
busy = int(sys.argv[1]) / 100 * 0.010
while True:
    t = time.perf_counter()
    while time.perf_counter() - t < busy:
        pass
    time.sleep(0.010 - busy)' "$HOG_DUTY" &
  fi
  hog_pid=$!
  sleep 0.5
}
stop_hog() {
  if [[ -n $hog_pid ]]; then
    kill "$hog_pid" 2>/dev/null || true
    wait "$hog_pid" 2>/dev/null || true
  fi
  hog_pid=""
  return 0
}
trap stop_hog EXIT

value() { sed -n "s/^$1: //p" "$2" | head -1; }
# run LOG NP ARGS... : one run of the workload's command; prints nothing, leaves its report in LOG.
run() {
  local log=$1 np=$2
  shift 2
  local t0
  t0=$(date +%s.%N)
  if [[ $np == 1 ]]; then
    timeout "$RUN_TIMEOUT" "$WARPSIM" --log-level warn "$@" >"$log" 2>&1 || echo "exit status $?" >>"$log"
  else
    # shellcheck disable=SC2086  # MPIEXEC and EXTRA_ARGS are word lists
    timeout "$RUN_TIMEOUT" $MPIEXEC -np "$np" "$WARPSIM" --log-level warn "$@" ${EXTRA_ARGS:-} >"$log" 2>&1 ||
      echo "exit status $?" >>"$log"
  fi
  # The whole command as a user waits for it: process start-up, MPI start-up, the shared-node probe.
  echo "command seconds: $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')" >>"$log"
}
wall() { local w; w=$(value "wall seconds" "$1"); echo "${w:-timeout}"; }
cmdwall() { local w; w=$(value "command seconds" "$1"); echo "${w:--}"; }

echo "shared-core benchmark: hog ${HOG_DUTY}% of one core, $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)," \
  "$(date -u +%FT%TZ), $("$WARPSIM" --version 2>/dev/null | head -1)"
echo
echo "| workload | sequential s (hog) | 2 ranks s (hog) | ratio | command s: sequential / 2 ranks (hog) | command ratio | ranks that simulated | efficiency % | rolled back / processed | cpu share min | 2 ranks s (quiet) | digests agree |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for w in $WORKLOADS; do
  case $w in
    phold)
      seq_args=(phold --progress-seconds 0 --sync sequential --lps-per-rank 2048 --end-time 10000)
      par_args=(phold --progress-seconds 0 --sync optimistic --lps-per-rank 1024 --end-time 10000
        --digest-file "$OUT/phold-np2.digests")
      seq_args+=(--digest-file "$OUT/phold-np1.digests")
      ;;
    default) seq_args=(run --progress-seconds 0 --sync sequential "$HERE/examples/default.textproto")
      par_args=(run --progress-seconds 0 "$HERE/examples/default.textproto") ;;
    llama70b) seq_args=(run --progress-seconds 0 --sync sequential "$HERE/examples/llama2-70b-64xh100-packet.textproto")
      par_args=(run --progress-seconds 0 "$HERE/examples/llama2-70b-64xh100-packet.textproto") ;;
    *) echo "bench-shared-core: unknown workload '$w' in WORKLOADS (phold, default, llama70b)" >&2; exit 2 ;;
  esac
  start_hog
  run "$OUT/$w-seq-hog.log" 1 "${seq_args[@]}"
  stop_hog
  start_hog
  run "$OUT/$w-np2-hog.log" 2 "${par_args[@]}"
  stop_hog
  run "$OUT/$w-np2-quiet.log" 2 "${par_args[@]}"
  s=$(wall "$OUT/$w-seq-hog.log")
  p=$(wall "$OUT/$w-np2-hog.log")
  q=$(wall "$OUT/$w-np2-quiet.log")
  ratio=$(awk -v p="$p" -v s="$s" 'BEGIN { if (p + 0 > 0 && s + 0 > 0) printf "%.2f", p / s; else print "-" }')
  rb=$(value "events rolled back" "$OUT/$w-np2-hog.log")
  pr=$(value "events processed" "$OUT/$w-np2-hog.log")
  share=$(awk -v r="${rb:-0}" -v p="${pr:-0}" 'BEGIN { if (p > 0) printf "%.3f", r / p; else print "-" }')
  if [[ $w == phold ]]; then
    agree=$(cmp -s <(sort "$OUT/phold-np1.digests") <(sort "$OUT/phold-np2.digests") && echo yes || echo NO)
  else
    d1=$(value "state digest" "$OUT/$w-seq-hog.log")
    d2=$(value "state digest" "$OUT/$w-np2-hog.log")
    d3=$(value "state digest" "$OUT/$w-np2-quiet.log")
    agree=$([[ -n $d1 && $d1 == "$d2" && $d1 == "$d3" ]] && echo "yes ($d1)" || echo NO)
  fi
  cs=$(cmdwall "$OUT/$w-seq-hog.log")
  cp=$(cmdwall "$OUT/$w-np2-hog.log")
  cratio=$(awk -v p="$cp" -v s="$cs" 'BEGIN { if (p + 0 > 0 && s + 0 > 0) printf "%.2f", p / s; else print "-" }')
  echo "| $w | $s | $p | $ratio | $cs / $cp | $cratio | $(value ranks "$OUT/$w-np2-hog.log") |" \
    "$(value efficiency "$OUT/$w-np2-hog.log") | $share |" \
    "$(value "cpu share min" "$OUT/$w-np2-hog.log") | $q | $agree |"
done
