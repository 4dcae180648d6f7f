# `warpsim estimate --ops`: the per-op table accounts for exactly the last stage's compute time (its rows
# sum to the report's "last stage ... seconds" lines), every row names an op that ran, and no GEMM row runs
# faster than the GPU's dense peak (the table reports what the model charged, not a second model).
source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
SPEC=$ROOT/examples/default.textproto

out=$("$WARPSIM" estimate --ops "$SPEC") || fail "estimate --ops exited $?"
plain=$("$WARPSIM" estimate "$SPEC") || fail "estimate exited $?"
# The report above the table is unchanged by the flag.
[[ $(sed -n '/^$/q;p' <<<"$out") == "$plain" ]] || fail "--ops changed the report"

phases=$(grep -E '^last stage .* seconds: ' <<<"$out" | awk -F': ' '{s += $2} END {printf "%.6f", s}')
table=$(sed -n '/^op (last stage, one step)/,$p' <<<"$out" | tail -n +2)
[[ -n $table ]] || fail "no op table:
$out"
rows=$(wc -l <<<"$table")
[[ $rows -ge 10 ]] || fail "only $rows op rows"
sum=$(awk '{s += $3} END {printf "%.6f", s}' <<<"$table")
# The phase lines print 4 decimals, the rows 6: agree to the phase lines' rounding.
awk -v a="$sum" -v b="$phases" 'BEGIN {d = a - b; if (d < 0) d = -d; exit !(d < 5e-4 * 4)}' ||
  fail "op rows sum to $sum s, the phases to $phases s"
share=$(awk '{gsub("%", "", $4); s += $4} END {printf "%.0f", s}' <<<"$table")
[[ $share == 100 ]] || fail "shares sum to $share%"
awk '$2 < 1 {exit 1}' <<<"$table" || fail "a row with no op:
$table"
grep -qE '^(qkv_fwd|mlp_up_fwd) ' <<<"$table" || fail "no GEMM row:
$table"
# default.textproto runs BF16 on H100-SXM, whose dense BF16 peak is 989 TFLOP/s.
grep -q '^gpu: H100-SXM$' <<<"$out" || fail "default example is no longer H100-SXM: update the peak below"
peak=$(awk '{if ($5 > m) m = $5} END {print m}' <<<"$table")
awk -v p="$peak" 'BEGIN {exit !(p > 0 && p < 989)}' || fail "a row at $peak TFLOP/s, not within (0, 989)"
echo "ok estimate --ops: $rows rows, $sum s = phases $phases s"
