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
echo OK
