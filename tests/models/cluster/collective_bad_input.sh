# `warpsim collective` with bad input prints one error line naming the flag or field and exits 2.
source "$(dirname "$0")/../../jobs/cli/lib.sh"
EXAMPLES=${2:?usage: $0 warpsim examples/clusters}
GOOD=$EXAMPLES/fat_tree_2tier_16gpu.textproto
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

expect_usage_error() {
  local np=$1 want=$2
  shift 2
  local err code=0
  err=$($MPIEXEC -np "$np" "$WARPSIM" "$@" 2>&1 >/dev/null) || code=$?
  local line
  line=$(printf '%s\n' "$err" | grep '^warpsim: error: ' || true)
  [[ $code -eq 2 ]] || fail "'$*' on $np ranks exited $code, expected 2 (stderr: $err)"
  [[ $(printf '%s\n' "$line" | grep -c .) -eq 1 ]] || fail "'$*': expected one error line, got: $err"
  [[ $line == *"$want"* ]] || fail "'$*': error does not name '$want': $line"
  echo "ok np=$np: $line"
}

sed 's/bandwidth_gbps: 400 latency_ns: 500 }$/bandwidth_gbps: 0 latency_ns: 500 }/' "$GOOD" >"$TMP/zero_bw.textproto"
sed 's/nodes: 4/nodes: 64/' "$GOOD" >"$TMP/radix.textproto"
sed 's/topology: "fat_tree"/topology: "hypercube"/' "$GOOD" >"$TMP/topology.textproto"
sed 's/radix: 8/radixx: 8/' "$GOOD" >"$TMP/typo.textproto"
sed 's/fidelity: "packet"/fidelity: "fluid"/' "$GOOD" >"$TMP/fidelity.textproto"
sed 's/fidelity: "packet"/switching: "wormhole"/' "$GOOD" >"$TMP/switching.textproto"

np=1
expect_usage_error "$np" "fat_tree.links[0].bandwidth_gbps" collective --cluster "$TMP/zero_bw.textproto"
expect_usage_error "$np" "fat_tree.radix" collective --cluster "$TMP/radix.textproto"
expect_usage_error "$np" "topology" collective --cluster "$TMP/topology.textproto"
expect_usage_error "$np" "radixx" collective --cluster "$TMP/typo.textproto"
expect_usage_error "$np" "--cluster" collective --cluster "$TMP/missing.textproto"
expect_usage_error "$np" "--cluster" collective
expect_usage_error "$np" "--op" collective --cluster "$GOOD" --op allsum
expect_usage_error "$np" "--channels" collective --cluster "$GOOD" --channels 65
expect_usage_error "$np" "--protocol" collective --cluster "$GOOD" --protocol ll256
expect_usage_error "$np" "--algo" collective --cluster "$GOOD" --algo butterfly
expect_usage_error "$np" "--algorithm" collective --cluster "$GOOD" --algorithm tree --op alltoall
expect_usage_error "$np" "--local-gpus" collective --cluster "$GOOD" --algorithm hierarchical --local-gpus 3
expect_usage_error "$np" "--algorithm: tree does not implement --op reducescatter" collective --cluster "$GOOD" \
  --algorithm tree --op reducescatter
expect_usage_error "$np" "--algorithm: auto chooses between the ring and the tree of an all-reduce" collective \
  --cluster "$GOOD" --algorithm auto --op allgather
expect_usage_error "$np" "hierarchical implements allreduce, allgather, reducescatter, broadcast" collective \
  --cluster "$GOOD" --algorithm hierarchical --op alltoall
expect_usage_error "$np" "--local-gpus" collective --cluster "$GOOD" --algorithm hierarchical --op reducescatter \
  --local-gpus 3
expect_usage_error "$np" "--local-gpus" collective --cluster "$GOOD" --algorithm hierarchical --op allgather \
  --gpus 6 --local-gpus 4
# Every algorithm runs on the torus too (tests/models/cluster/collective_rank_invariance.sh); the same checks apply.
expect_usage_error "$np" "--algorithm: tree does not implement --op allgather" collective \
  --cluster "$EXAMPLES/torus_2d_16gpu.textproto" --algorithm tree --op allgather
expect_usage_error "$np" "--local-gpus" collective --cluster "$EXAMPLES/torus_2d_16gpu.textproto" \
  --algorithm hierarchical --op reducescatter --local-gpus 5
expect_usage_error "$np" "--fidelity" collective --cluster "$GOOD" --fidelity fluid
expect_usage_error "$np" "network.fidelity" collective --cluster "$TMP/fidelity.textproto"
expect_usage_error "$np" "network.switching" collective --cluster "$TMP/switching.textproto"
expect_usage_error "$np" "--gpus" collective --cluster "$GOOD" --gpus 17
expect_usage_error "$np" "--gpus" collective --cluster "$GOOD" --gpus 5 --stride 4
expect_usage_error "$np" "--min-bytes" collective --cluster "$GOOD" --min-bytes 1XB
expect_usage_error "$np" "--min-bytes" collective --cluster "$GOOD" --min-bytes 2MiB --max-bytes 1MiB
expect_usage_error "$np" "--step-factor" collective --cluster "$GOOD" --step-factor 1
# Issue #25: a zero or inverted size range was one silent row.
expect_usage_error "$np" "--min-bytes must be > 0" collective --cluster "$GOOD" --min-bytes 0
expect_usage_error "$np" "--min-bytes must be > 0" collective --cluster "$GOOD" --min-bytes 0 --max-bytes 0
expect_usage_error "$np" "--max-bytes (0)" collective --cluster "$GOOD" --max-bytes 0
expect_usage_error "$np" "--max-bytes (1KiB)" collective --cluster "$GOOD" --min-bytes 4KiB --max-bytes 1KiB
expect_usage_error "$np" "--max-bytes: at most 1 TiB" collective --cluster "$GOOD" --max-bytes 2048GiB
expect_usage_error "$np" "--step-factor" collective --cluster "$GOOD" --step-factor 0
expect_usage_error "$np" "--step-factor" collective --cluster "$GOOD" --step-factor -4
expect_usage_error "$np" "--chunk-bytes" collective --cluster "$GOOD" --chunk-bytes 0
expect_usage_error "$np" "--sync" collective --cluster "$GOOD" --sync eventually
# Under 2 ranks only rank 0 reports, and every rank exits 2 (mpiexec startup is slow, so a few cases).
expect_usage_error 2 "fat_tree.radix" collective --cluster "$TMP/radix.textproto"
expect_usage_error 2 "--op" collective --cluster "$GOOD" --op allsum
expect_usage_error 2 "--sync sequential" collective --cluster "$GOOD" --sync sequential
