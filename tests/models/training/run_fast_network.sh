#!/usr/bin/env bash
# With a near-ideal network (huge bandwidth, 1 ns latencies, one packet per message) and no checkpoints,
# (and no NCCL latency or reduction time) the simulated step time approaches `warpsim estimate`'s compute-only figure: within 1% above it, never
# below it by more than rounding, and no communication class is exposed. The real network must be slower.
set -euo pipefail
WARPSIM=$1
SPEC=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
sed -e 's/nvlink_bandwidth_gbps: [0-9.e]* nvlink_latency_ns: [0-9]*/nvlink_bandwidth_gbps: 1e9 nvlink_latency_ns: 1/' \
    -e 's/bandwidth_gbps: 400 latency_ns: 500/bandwidth_gbps: 1e9 latency_ns: 1/g' \
    -e 's/network { packet_bytes: [0-9]* }/network { packet_bytes: 1073741824 switch_latency_ns: 1 switch_buffer_bytes: 1073741824 }\n  nic { injection_latency_ns: 1 }/' \
    -e 's/checkpoint_interval_steps: [0-9]*/checkpoint_interval_steps: 0/' \
    -e 's/grad_bucket_bytes: \([0-9]*\)/grad_bucket_bytes: \1 nccl_protocol: "none" free_reductions: true/' \
    "$SPEC" >"$TMP/fast.textproto"
# NCCL's per-call latency and the reductions' HBM time are GPU-side costs no network removes: off here.
grep -q 'latency_ns: 1$\|latency_ns: 1 ' "$TMP/fast.textproto" || { echo "FAIL: spec rewrite did not apply"; exit 1; }
grep -q 'nccl_protocol: "none"' "$TMP/fast.textproto" || { echo "FAIL: spec rewrite did not apply"; exit 1; }
key() { grep "^$1: " | head -1 | sed "s/^$1: //"; }
fast=$("$WARPSIM" run "$TMP/fast.textproto" --sync sequential --attribute --progress-seconds 0)
real=$("$WARPSIM" run "$SPEC" --sync sequential --progress-seconds 0)
step=$(key "step seconds" <<<"$fast")
est=$(key "estimate step seconds" <<<"$fast")
real_step=$(key "step seconds" <<<"$real")
# Every attributed communication class is (nearly) free on the ideal network: < 1% of the step each.
while read -r v; do
  awk -v v="$v" -v s="$step" 'BEGIN { if (v > 0.01 * s || v < -0.01 * s) { print "FAIL: attributed " v " s on an ideal network"; exit 1 } }'
done < <(grep '^exposed .* communication seconds: ' <<<"$fast" | grep -v '^exposed communication' | sed 's/.*: //')
echo "fast-network step $step s, compute-only estimate $est s, real-network step $real_step s"
awk -v s="$step" -v e="$est" -v r="$real_step" 'BEGIN {
  ratio = s / e
  printf "ratio %.5f\n", ratio
  if (ratio < 0.999 || ratio > 1.01) { print "FAIL: fast-network step not within [0.999, 1.01] of the estimate"; exit 1 }
  if (!(r > s)) { print "FAIL: the real network is not slower than the ideal one"; exit 1 }
}'
