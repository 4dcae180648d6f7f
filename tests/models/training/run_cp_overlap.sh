#!/usr/bin/env bash
# Context parallelism's KV ring overlapped with the attention (the default; docs/workload.md, "Context-parallel
# KV exchange overlap"), end to end on small_cp.textproto (TP 2, CP 2, PP 2, DP 2) against the same job with
# training.no_cp_comm_overlap:
#  - the attention's chunks add up to the whole attention (no SMs are taken from it): the same compute seconds;
#  - the ring's time hides behind the first chunk: less exposed context communication and a shorter step.
# Args: path/to/warpsim. Env: WARPSIM_MPIEXEC.
source "$(dirname "$0")/../../jobs/cli/lib.sh"
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed 's/    checkpoint_interval_steps: 2/    checkpoint_interval_steps: 2\n    no_cp_comm_overlap: true/' \
  "$here/small_cp.textproto" >"$tmp/serial.textproto"
grep -q 'no_cp_comm_overlap: true' "$tmp/serial.textproto" || fail "could not make the serial variant"
run1() { run_np 1 run "$1" --sync sequential --progress-seconds 0 --attribute; }
on=$(run1 "$here/small_cp.textproto")
off=$(run1 "$tmp/serial.textproto")
[[ $(value "compute seconds" "$on") == "$(value "compute seconds" "$off")" ]] ||
  fail "compute seconds differ: overlapped $(value "compute seconds" "$on"), serial $(value "compute seconds" "$off")"
awk -v t_on="$(value "step seconds" "$on")" -v t_off="$(value "step seconds" "$off")" \
  -v x_on="$(value "exposed context communication seconds" "$on")" \
  -v x_off="$(value "exposed context communication seconds" "$off")" 'BEGIN {
  if (!(x_off > 0)) { print "FAIL: the serial run exposes no context communication: " x_off; exit 1 }
  if (!(x_on < x_off)) { print "FAIL: exposed context communication " x_off " -> " x_on; exit 1 }
  if (!(t_on < t_off)) { print "FAIL: step " t_off " -> " t_on; exit 1 }
  printf "ok: step %s -> %s s, exposed context communication %s -> %s s\n", t_off, t_on, x_off, x_on
}' || exit 1
