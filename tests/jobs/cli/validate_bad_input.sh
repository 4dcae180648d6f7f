#!/usr/bin/env bash
# `warpsim validate` refuses bad validation rows and flags before simulating anything: exit code 2 and one
# `warpsim: error:` line naming the field or flag (no reference, unknown metric, missing source, no
# validation message, a bad reduction, --jobs 0, a missing set, an existing --csv, a bad --set path, a
# --perturb of an unknown parameter, with a factor <= 0 or one that lifts an efficiency past 1, --docs
# without the set's block).
set -euo pipefail
WARPSIM=${1:?usage: $0 path/to/warpsim}
SRC=$(cd "$(dirname "$0")/../../.." && pwd)
source "$(dirname "$0")/expect_exit2.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
ROW=$SRC/validation/megatron-sc21/01-1.7b-32xa100.textproto

bad_row() {  # bad_row NAME FIELD SED-EXPRESSION
  local name=$1 field=$2 expr=$3
  mkdir -p "$TMP/$name"
  sed -e "$expr" "$ROW" >"$TMP/$name/row.textproto"
  cmp -s "$ROW" "$TMP/$name/row.textproto" && { echo "FAIL $name: rewrite did not apply"; exit 1; }
  expect_exit2 "$name" "$field" "$WARPSIM" validate "$TMP/$name"
}

bad_row no_reference "validation.reference: required" '/^  reference:/d'
bad_row unknown_metric "validation.metric: unknown metric 'mfu'" 's/metric: "tflops_per_gpu"/metric: "mfu"/'
bad_row no_metric "validation.metric: required" '/^  metric:/d'
bad_row no_source "validation.source: required" '/^  source:/d'
bad_row no_validation "validation: required" '/^validation {/,$d'
bad_row bad_points "validation.reduction.microbatch_points" '$s/^}$/  reduction { microbatch_points: [8, 4] }\n}/'
bad_row bad_flops "validation.flop_count" 's/flop_count: "hardware"/flop_count: "peak"/'

expect_exit2 jobs_zero "--jobs" "$WARPSIM" validate "$ROW" --jobs 0
expect_exit2 missing_set "SET: '$TMP/none' does not exist" "$WARPSIM" validate "$TMP/none"
expect_exit2 no_rows "--rows" "$WARPSIM" validate "$ROW" --rows 'nothing-*'
touch "$TMP/exists.csv"
expect_exit2 csv_exists "--csv" "$WARPSIM" validate "$ROW" --csv "$TMP/exists.csv"
expect_exit2 set_path "--set job.nope" "$WARPSIM" validate "$ROW" --set job.nope=1
expect_exit2 scale_default "--scale job.compute_model.compute_eff_max" "$WARPSIM" validate "$ROW" \
  --scale job.compute_model.compute_eff_max=1.1
expect_exit2 perturb_unknown "--perturb gemm: unknown parameter" "$WARPSIM" validate "$ROW" --perturb gemm=1.1
expect_exit2 perturb_zero "--perturb nic_bw: factor must be a number > 0" "$WARPSIM" validate "$ROW" \
  --perturb nic_bw=0
expect_exit2 perturb_negative "--perturb gemm_eff: factor must be a number > 0" "$WARPSIM" validate "$ROW" \
  --perturb gemm_eff=-1.1
expect_exit2 perturb_form "--perturb: 'gemm_eff' is not NAME=FACTOR" "$WARPSIM" validate "$ROW" --perturb gemm_eff
expect_exit2 perturb_above_peak "--perturb gemm_eff: job.compute_model.scale" "$WARPSIM" validate "$ROW" \
  --perturb gemm_eff=1.5
echo "no block here" >"$TMP/doc.md"
expect_exit2 docs_block "--docs" "$WARPSIM" validate "$ROW" --docs "$TMP/doc.md"
expect_exit2 docs_rows "--docs: rewrites whole sets" "$WARPSIM" validate "$ROW" --rows "01-*" --docs "$TMP/doc.md"
echo "ok: validate_bad_input"
