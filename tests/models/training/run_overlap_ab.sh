#!/usr/bin/env bash
# An overlap that is on by default, end to end against the same job with it turned off (docs/workload.md):
#  - the overlap hides communication: less exposed communication of its class and a shorter step;
#  - SAME_COMPUTE=1: the compute seconds are equal (its chunks add up to the whole op and take no SMs; the
#    context-parallel KV ring), else they may only grow, by the SMs NCCL's kernels take (ZeRO-3's gathers).
# Args: path/to/warpsim SPEC OFF_FIELD CLASS SAME_COMPUTE, e.g. small_cp.textproto no_cp_comm_overlap context 1.
# Env: WARPSIM_MPIEXEC.
source "$(dirname "$0")/../../jobs/cli/lib.sh"
spec=${2:?usage: $0 warpsim SPEC OFF_FIELD CLASS SAME_COMPUTE}
field=${3:?}
class=${4:?}
same_compute=${5:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed "s/    checkpoint_interval_steps: 2/    checkpoint_interval_steps: 2\n    $field: true/" "$spec" >"$tmp/off.textproto"
grep -q "$field: true" "$tmp/off.textproto" || fail "could not turn $field on in $spec"
run1() { run_np 1 run "$1" --sync sequential --progress-seconds 0 --attribute; }
on=$(run1 "$spec")
off=$(run1 "$tmp/off.textproto")
key="exposed $class communication seconds"
awk -v t_on="$(value "step seconds" "$on")" -v t_off="$(value "step seconds" "$off")" \
  -v x_on="$(value "$key" "$on")" -v x_off="$(value "$key" "$off")" \
  -v c_on="$(value "compute seconds" "$on")" -v c_off="$(value "compute seconds" "$off")" \
  -v same="$same_compute" -v what="$field" 'BEGIN {
  if (!(x_off > 0)) { print "FAIL: with " what " the run exposes no such communication: " x_off; exit 1 }
  if (!(x_on < x_off)) { print "FAIL: exposed communication " x_off " -> " x_on; exit 1 }
  if (!(t_on < t_off)) { print "FAIL: step " t_off " -> " t_on; exit 1 }
  if (same == 1 && c_on != c_off) { print "FAIL: compute seconds " c_off " -> " c_on; exit 1 }
  if (same != 1 && c_on < c_off) { print "FAIL: compute seconds fell " c_off " -> " c_on; exit 1 }
  printf "ok: step %s -> %s s, exposed communication %s -> %s s, compute %s -> %s s\n", t_off, t_on, x_off, x_on, c_off, c_on
}' || exit 1
