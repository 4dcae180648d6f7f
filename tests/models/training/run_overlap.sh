#!/usr/bin/env bash
# training.overlap_grad_reduce end to end (docs/workload.md, "Overlapped gradient reduce").
# dp2.textproto (PP 1, TP 1, DP 2: the DP gradient all-reduce is the only traffic), three closed-form checks:
#  - one bucket (grad_bucket_bytes 0) holds the embedding gradients, which the backward produces last, so it
#    is ready only when the backward ends: the overlapped step takes exactly as long as the plain one;
#  - with 20 MB buckets the overlapped step is shorter, and it saves at most what can hide: no more than the
#    DP reduce time R (the plain run's blocked-on-data time) and no more than the last micro-batch's backward,
#    itself below one micro-batch's compute (compute seconds / micro-batches): 0 < T_off - T_on <= min(R, C/m);
#  - compute started while the reduce is in flight runs sms / (sms - CTAs) times longer (H100: 132 SMs; one
#    GPU per node: one NCCL channel, one CTA), and only the last micro-batch's backward can overlap it:
#    0 <= C_on - C_off <= (C_off / m) / 131;
#  - the overlapped run's exposed DP time is T_on - C_on (PP 1: the step is compute plus what DP leaves
#    exposed; the report prints microseconds, so within 3 us).
# small_overlap.textproto (TP 2, PP 2, DP 4, checkpoints): the HDF5 contents (/series, /components, /summary)
# and state digest of optimistic runs on 1, 2 and 4 ranks equal the sequential run's.
# Args: path/to/warpsim. Env: WARPSIM_MPIEXEC.
source "$(dirname "$0")/../../jobs/cli/lib.sh"
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

variant() {  # variant BUCKET_BYTES OVERLAP -> a dp2 spec
  local f="$tmp/dp2-$1-$2.textproto"
  sed "s/    grad_bucket_bytes: 20000000/    grad_bucket_bytes: $1\n    overlap_grad_reduce: $2/" "$here/dp2.textproto" >"$f"
  echo "$f"
}
run1() { run_np 1 run "$1" --sync sequential --progress-seconds 0; }

one_off=$(run1 "$(variant 0 false)")
one_on=$(run1 "$(variant 0 true)")
[[ $(value "step seconds" "$one_on") == "$(value "step seconds" "$one_off")" ]] ||
  fail "one bucket: overlapped step $(value "step seconds" "$one_on") != plain $(value "step seconds" "$one_off")"
echo "ok one bucket: the overlapped step equals the plain one ($(value "step seconds" "$one_on") s)"

off=$(run1 "$(variant 20000000 false)")
on=$(run1 "$(variant 20000000 true)")
t_off=$(value "step seconds" "$off")
t_on=$(value "step seconds" "$on")
r=$(value "blocked on data seconds" "$off")
c=$(value "compute seconds" "$off")
m=$(value "microbatches per step" "$off")
exposed_on=$(value "blocked on data seconds" "$on")
c_on=$(value "compute seconds" "$on")
awk -v off="$t_off" -v on="$t_on" -v r="$r" -v c="$c" -v m="$m" -v x="$exposed_on" -v con="$c_on" 'BEGIN {
  saved = off - on; bound = (r < c / m) ? r : c / m;
  if (!(saved > 0)) { print "FAIL: overlap saved nothing: " off " -> " on; exit 1 }
  if (saved > bound + 3e-6) { print "FAIL: saved " saved " s > min(R, C/m) = " bound " s"; exit 1 }
  if (con < c || con - c > c / m / 131 + 3e-6) { print "FAIL: contended compute " con " vs " c; exit 1 }
  if (x - (on - con) > 3e-6 || (on - con) - x > 3e-6) { print "FAIL: exposed DP " x " != T_on - C_on " on - con; exit 1 }
  printf "ok 20 MB buckets: step %s -> %s s, saved %.6f s <= min(R %s, C/m %.6f); compute %s -> %s s\n", off, on, saved, r, c / m, c, con
}' || exit 1

# training.overlap_param_gather (ZeRO-1): the parameter all-gathers run from the step's start and each layer's
# first forward waits for its bucket. One bucket: the first forward waits for all of it, which is the plain
# run's step-end gather moved to the front: the same step. 20 MB buckets: shorter, by no more than the plain
# run's exposed DP time R and no more than the first micro-batch's forward (< C/m): 0 < T_off - T_on <= min(R, C/m).
pg_variant() {  # pg_variant BUCKET_BYTES OVERLAP -> a dp2 ZeRO-1 spec
  local f="$tmp/pg-$1-$2.textproto"
  sed "s/    grad_bucket_bytes: 20000000/    grad_bucket_bytes: $1\n    overlap_param_gather: $2/; s/data_parallel: 2 }/data_parallel: 2 zero_stage: 1 }/" \
    "$here/dp2.textproto" >"$f"
  echo "$f"
}
pg_off=$(run1 "$(pg_variant 0 false)")
pg_on=$(run1 "$(pg_variant 0 true)")
[[ $(value "step seconds" "$pg_on") == "$(value "step seconds" "$pg_off")" ]] ||
  fail "param gather, one bucket: overlapped step $(value "step seconds" "$pg_on") != plain $(value "step seconds" "$pg_off")"
echo "ok param gather, one bucket: the overlapped step equals the plain one ($(value "step seconds" "$pg_on") s)"
pg_off=$(run1 "$(pg_variant 20000000 false)")
pg_on=$(run1 "$(pg_variant 20000000 true)")
awk -v off="$(value "step seconds" "$pg_off")" -v on="$(value "step seconds" "$pg_on")" \
  -v r="$(value "blocked on data seconds" "$pg_off")" -v c="$(value "compute seconds" "$pg_off")" \
  -v m="$(value "microbatches per step" "$pg_off")" 'BEGIN {
  saved = off - on; bound = (r < c / m) ? r : c / m;
  if (!(saved > 0)) { print "FAIL: param gather overlap saved nothing: " off " -> " on; exit 1 }
  if (saved > bound + 3e-6) { print "FAIL: param gather saved " saved " s > min(R, C/m) = " bound " s"; exit 1 }
  printf "ok param gather, 20 MB buckets: step %s -> %s s, saved %.6f s <= min(R %s, C/m %.6f)\n", off, on, saved, r, c / m
}' || exit 1

same_results() {
  local a=$1 b=$2 g
  for g in /series /components /summary; do
    h5diff "$a" "$b" "$g" "$g" >/dev/null || return 1
  done
}
# small_tp_overlap.textproto adds tp_comm_overlap: TP pieces share the communication stream with the buckets.
for SPEC in $here/small_overlap.textproto $here/small_tp_overlap.textproto $here/small_param_gather.textproto; do
  ref=$(run_np 1 run "$SPEC" --sync sequential --progress-seconds 0 --output "$tmp/seq.h5" --overwrite)
  for np in 1 2 4; do
    out=$(run_np "$np" run "$SPEC" --sync optimistic --progress-seconds 0 --output "$tmp/run.h5" --overwrite \
      --output-layout single)
    [[ $(value "state digest" "$out") == "$(value "state digest" "$ref")" ]] || fail "np=$np: state digest differs"
    [[ $(value "events committed" "$out") == "$(value "events committed" "$ref")" ]] || fail "np=$np: events differ"
    same_results "$tmp/seq.h5" "$tmp/run.h5" || fail "np=$np: HDF5 contents differ from the sequential run"
    echo "ok optimistic np=$np: digest, events and HDF5 contents equal the sequential run's" \
      "(rolled back $(value "events rolled back" "$out"))"
  done
done
