# `warpsim collective` output as nccl-tests users read it (issue #25 item 6): the header, then the rows with
# nothing between them, then one `# run cost:` summary line; --verbose adds the per-size run cost after the
# rows, never between them.
source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
args=(collective --cluster "$ROOT/examples/clusters/fat_tree_2tier_16gpu.textproto" --min-bytes 1KiB
      --max-bytes 16KiB --step-factor 4 --sync sequential)
check() {
  local name=$1 out=$2 rows
  # Lines 3-5 are the three rows (1, 4, 16 KiB); the header is two comment lines.
  rows=$(sed -n 3,5p <<<"$out")
  [[ $(grep -c '^#' <<<"$rows" || true) -eq 0 ]] || fail "$name: a comment line between the rows:
$out"
  [[ $(awk '{print $1}' <<<"$rows" | tr '\n' ' ') == "1024 4096 16384 " ]] || fail "$name: rows:
$out"
  [[ $(tail -n 1 <<<"$out") == "# run cost: 3 sizes, wall "* ]] || fail "$name: last line is not the run cost:
$out"
  echo "ok $name"
}
out=$(run_np 1 "${args[@]}")
check plain "$out"
[[ $(grep -c . <<<"$out") -eq 6 ]] || fail "plain: expected header (2), 3 rows, 1 summary line:
$out"
out=$(run_np 1 "${args[@]}" --verbose)
check verbose "$out"
[[ $(grep -c '^# [0-9]* bytes: wall' <<<"$out") -eq 3 ]] || fail "verbose: expected 3 per-size lines:
$out"
# --algorithm auto: NCCL's ring-or-tree choice per size, named on a model line per size (--verbose). One GPU
# per node over 32 nodes of the default cluster: NCCL's model picks the tree for 64 KiB, the ring for 1 GiB.
out=$(run_np 1 collective --cluster "$ROOT/examples/default.textproto" --algorithm auto --stride 8 --gpus 32 \
  --min-bytes 64KiB --max-bytes 1GiB --step-factor 16384 --fidelity flow --sync sequential --verbose)
grep -q '^# 65536 bytes: algorithm tree$' <<<"$out" || fail "auto: 64 KiB should run as the tree:
$out"
grep -q '^# 1073741824 bytes: algorithm ring$' <<<"$out" || fail "auto: 1 GiB should run as the ring:
$out"
echo "ok auto"
