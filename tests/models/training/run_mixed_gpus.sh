#!/usr/bin/env bash
# A job across two GPU generations in the full simulation (issue #26 item 2). SPEC has node groups (stage 0
# on H100, stage 1 on A100). On the spec's network, the step lies between the all-H100 and the all-A100 runs
# of the same spec (the slow stage limits it). On a near-ideal network (run_fast_network.sh's rewrite), one
# step without a checkpoint matches the compute-only estimate, which times each stage on its own generation,
# within [0.999, 1.01]. One step: over several steps a fast stage starts the next step's forwards while the
# slow one still runs its optimizer, so the per-step mean may fall below the single-step estimate.
# Args: path/to/warpsim SPEC.
set -euo pipefail
WARPSIM=$1
SPEC=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
grep -q 'gpu_type: "A100-80GB"' "$SPEC" || { echo "FAIL: $SPEC has no A100 node group"; exit 1; }
sed -e '/node_group/s/A100-80GB/H100-SXM/' "$SPEC" >"$TMP/h100.textproto"
sed -e '/node_group/s/H100-SXM/A100-80GB/' -e 's/^  gpu_type: "H100-SXM"/  gpu_type: "A100-80GB"/' "$SPEC" >"$TMP/a100.textproto"
grep -v '^#' "$TMP/h100.textproto" | grep -q 'A100' && { echo "FAIL: all-H100 rewrite left an A100"; exit 1; }
grep -v '^#' "$TMP/a100.textproto" | grep -q 'H100' && { echo "FAIL: all-A100 rewrite left an H100"; exit 1; }
sed -e 's/nvlink_bandwidth_gbps: [0-9.e]* nvlink_latency_ns: [0-9]*/nvlink_bandwidth_gbps: 1e9 nvlink_latency_ns: 1/' \
    -e 's/bandwidth_gbps: 400 latency_ns: 500/bandwidth_gbps: 1e9 latency_ns: 1/g' \
    -e 's/network { packet_bytes: [0-9]* }/network { packet_bytes: 1073741824 switch_latency_ns: 1 switch_buffer_bytes: 1073741824 }\n  nic { injection_latency_ns: 1 }/' \
    -e 's/checkpoint_interval_steps: [0-9]*/checkpoint_interval_steps: 0/' \
    -e 's/simulation { steps: [0-9]* }/simulation { steps: 1 }/' \
    -e 's/grad_bucket_bytes: \([0-9]*\)/grad_bucket_bytes: \1 nccl_protocol: "none" free_reductions: true/' \
    "$SPEC" >"$TMP/fast.textproto"
# NCCL's per-call latency and the reductions' HBM traffic are GPU-side costs no network removes: the ideal run
# turns them off, as run_fast_network.sh does, so that only compute and the schedule remain.
grep -q 'steps: 1 }' "$TMP/fast.textproto" && grep -q 'latency_ns: 1 ' "$TMP/fast.textproto" &&
  grep -q 'nccl_protocol: "none"' "$TMP/fast.textproto" ||
  { echo "FAIL: ideal-network rewrite did not apply"; exit 1; }
key() { grep "^$1: " | head -1 | sed "s/^$1: //"; }
run() { "$WARPSIM" run "$1" --sync sequential --progress-seconds 0; }
mixed=$(run "$SPEC")
grep -q '^gpu types: H100-SXM 8, A100-80GB 8$' <<<"$mixed" || { echo "FAIL: gpu types: $(key 'gpu types' <<<"$mixed")"; exit 1; }
h=$(run "$TMP/h100.textproto" | key "step seconds")
m=$(key "step seconds" <<<"$mixed")
a=$(run "$TMP/a100.textproto" | key "step seconds")
fast=$(run "$TMP/fast.textproto")
s=$(key "step seconds" <<<"$fast")
e=$(key "estimate step seconds" <<<"$fast")
echo "step seconds: all-H100 $h, mixed $m, all-A100 $a; ideal network: mixed $s, estimate $e"
awk -v h="$h" -v m="$m" -v a="$a" -v s="$s" -v e="$e" 'BEGIN {
  if (!(h < m && m <= a)) { print "FAIL: the mixed step is not between the all-H100 and all-A100 steps"; exit 1 }
  r = s / e
  printf "ideal-network step / estimate %.5f\n", r
  if (r < 0.999 || r > 1.01) { print "FAIL: ideal-network step not within [0.999, 1.01] of the estimate"; exit 1 }
}'
# Two steps on that ideal network with --attribute: the fast stage starts the next step's forwards early, so
# the step loses less than the one-step dependency wait the pipeline attribution subtracts; exposed time is
# floored at 0 (it read -0.000130 s here before), never negative for any class.
sed -e 's/simulation { steps: 1 }/simulation { steps: 2 }/' "$TMP/fast.textproto" >"$TMP/fast2.textproto"
attributed=$("$WARPSIM" run "$TMP/fast2.textproto" --sync sequential --progress-seconds 0 --attribute)
pipe=$(key "exposed pipeline communication seconds" <<<"$attributed")
[[ -n $pipe ]] || { echo "FAIL: no exposed pipeline communication seconds"; exit 1; }
if grep '^exposed .* seconds: -' <<<"$attributed"; then echo "FAIL: a negative exposed time"; exit 1; fi
echo "ideal network, 2 steps: exposed pipeline communication seconds $pipe"
