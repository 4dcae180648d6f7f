#!/usr/bin/env bash
# `warpsim estimate`: the Megatron-LM 1T example runs and reports its numbers; bad specs exit with code 2
# and an error naming the field.
set -euo pipefail
WARPSIM=${1:?usage: $0 path/to/warpsim path/to/example.txtpb}
EXAMPLE=${2:?usage: $0 path/to/warpsim path/to/example.txtpb}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

out=$("$WARPSIM" estimate "$EXAMPLE")
printf '%s\n' "$out"
gpus=$(printf '%s\n' "$out" | sed -n 's/^gpus: //p')
[ "$gpus" = 3072 ] || fail "gpus: $gpus"
tflops=$(printf '%s\n' "$out" | sed -n 's/^tflops per gpu: //p')
awk -v t="$tflops" 'BEGIN { exit !(t > 0 && t < 312) }' || fail "tflops per gpu out of (0, peak): $tflops"
# The other Megatron-LM Table 1 rows (docs/validation.md) estimate too, each below the A100 peak.
rows=0
for row in "$(dirname "$EXAMPLE")"/megatron-table1/*.txtpb; do
  t=$("$WARPSIM" estimate "$row" | sed -n 's/^tflops per gpu: //p')
  awk -v t="$t" 'BEGIN { exit !(t > 0 && t < 312) }' || fail "$row: tflops per gpu out of (0, peak): $t"
  rows=$((rows + 1))
done
[ "$rows" = 9 ] || fail "expected 9 Table 1 row specs, found $rows"

# expect_error SPEC_FILE FIELD
expect_error() {
  set +e
  err=$("$WARPSIM" estimate "$1" 2>&1 >/dev/null)
  code=$?
  set -e
  [ "$code" = 2 ] || fail "$1: exit code $code, expected 2 ($err)"
  printf '%s\n' "$err" | grep -q "$2" || fail "$1: error does not name $2: $err"
}
sed 's/tensor_parallel: 8/tensor_parallel: 7/' "$EXAMPLE" >"$TMP/tp.txtpb"
expect_error "$TMP/tp.txtpb" parallelism.tensor_parallel
sed 's/pipeline_parallel: 64/pipeline_parallel: 48/' "$EXAMPLE" >"$TMP/pp.txtpb"
expect_error "$TMP/pp.txtpb" parallelism.pipeline_parallel
sed 's/world_size_gpus: 3072/world_size_gpus: 4096/' "$EXAMPLE" >"$TMP/world.txtpb"
expect_error "$TMP/world.txtpb" world_size_gpus
sed 's/A100-80GB/A100-40GB/' "$EXAMPLE" >"$TMP/gpu.txtpb"
expect_error "$TMP/gpu.txtpb" gpu_type
sed 's/global_batch_sequences: 3072/global_batch_sequences: 3000/' "$EXAMPLE" >"$TMP/batch.txtpb"
expect_error "$TMP/batch.txtpb" training.global_batch_sequences
printf 'model { num_layers: oops }\n' >"$TMP/syntax.txtpb"
expect_error "$TMP/syntax.txtpb" "syntax.txtpb:1:"
printf 'op,flops\n' >"$TMP/table.csv"
set +e
err=$("$WARPSIM" estimate "$EXAMPLE" --measured-table "$TMP/table.csv" 2>&1 >/dev/null)
code=$?
set -e
[ "$code" = 2 ] && printf '%s\n' "$err" | grep -q "table.csv:1:" || fail "bad measured table: $code $err"
# Efficiency flags override the spec's compute_model; out-of-range values name the flag.
set +e
err=$("$WARPSIM" estimate "$EXAMPLE" --compute-eff-max 1.5 2>&1 >/dev/null)
code=$?
set -e
[ "$code" = 2 ] && printf '%s\n' "$err" | grep -q -- "--compute-eff-max" || fail "bad --compute-eff-max: $code $err"
# (The default is the GPU profile's measured value, so the flag is compared with the spec field set to 0.8.)
printf 'compute_model { compute_eff_max: 0.6 }\n' | cat "$EXAMPLE" - >"$TMP/eff.txtpb"
printf 'compute_model { compute_eff_max: 0.8 }\n' | cat "$EXAMPLE" - >"$TMP/eff8.txtpb"
low=$("$WARPSIM" estimate "$TMP/eff.txtpb" | sed -n 's/^tflops per gpu: //p')
ref=$("$WARPSIM" estimate "$TMP/eff8.txtpb" | sed -n 's/^tflops per gpu: //p')
flag=$("$WARPSIM" estimate "$TMP/eff.txtpb" --compute-eff-max 0.8 | sed -n 's/^tflops per gpu: //p')
[ "$flag" = "$ref" ] || fail "--compute-eff-max 0.8 over a spec's 0.6: $flag, expected $ref"
awk -v a="$low" -v b="$tflops" 'BEGIN { exit !(a < 0.8 * b) }' || fail "compute_eff_max 0.6: $low vs $tflops"
echo OK
