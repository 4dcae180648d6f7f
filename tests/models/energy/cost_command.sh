#!/usr/bin/env bash
# `warpsim cost` as users run it: from a saved `warpsim run` summary it reproduces the run's energy and cost
# per step (within 1%: the summary lacks the switch and storage bytes); from the compute-only estimate it
# prints the same keys; --with overlays the economics sections; bad input exits 2 naming the flag/field.
set -euo pipefail
WARPSIM=$1
SPEC=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
value() { sed -n "s/^$1: //p" <<<"$2"; }
# The checkpoint stall given, so that `cost` and `run` use the same one.
sed -e 's/^reliability {/reliability {\n  checkpoint_seconds: 0.05/' "$SPEC" >"$TMP/spec.textproto"
"$WARPSIM" run "$TMP/spec.textproto" --sync sequential --progress-seconds 0 >"$TMP/summary.txt"
run=$(cat "$TMP/summary.txt")
cost=$("$WARPSIM" cost "$TMP/spec.textproto" --summary "$TMP/summary.txt")
[[ $(value 'step source' "$cost") == summary ]] || { echo "FAIL: step source"; exit 1; }
for k in 'it energy joules per step' 'cost usd per step' 'operating kgco2e per step'; do
  awk -v a="$(value "$k" "$run")" -v b="$(value "$k" "$cost")" \
      'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a > 0 && d <= 0.01 * a) }' ||
    { echo "FAIL: '$k': run $(value "$k" "$run"), cost $(value "$k" "$cost")"; exit 1; }
  echo "ok $k: run $(value "$k" "$run"), cost --summary $(value "$k" "$cost")"
done
est=$("$WARPSIM" cost "$TMP/spec.textproto")
[[ $(value 'step source' "$est") == 'compute-only estimate' ]] || { echo "FAIL: estimate source"; exit 1; }
grep -q '^goodput: 0\.' <<<"$est" || { echo "FAIL: no goodput from the estimate"; exit 1; }
echo "ok estimate: step $(value 'step seconds' "$est") s, goodput $(value goodput "$est")"
# --with: the economics of a spec without them.
awk '/^(cost|reliability) \{/{skip=1} !skip{print} /^\}/{skip=0}' "$TMP/spec.textproto" >"$TMP/bare.textproto"
awk '/^(cost|reliability) \{/{keep=1} keep{print} /^\}/{keep=0}' "$TMP/spec.textproto" >"$TMP/econ.textproto"
with=$("$WARPSIM" cost "$TMP/bare.textproto" --with "$TMP/econ.textproto")
[[ "$with" == "$est" ]] || { echo "FAIL: --with differs:"; diff <(echo "$est") <(echo "$with"); exit 1; }
echo "ok --with"
source "$(dirname "$0")/../../jobs/cli/expect_exit2.sh"
expect_exit2 no_sections "cost or reliability" "$WARPSIM" cost "$TMP/bare.textproto"
expect_exit2 no_summary "--summary" "$WARPSIM" cost "$TMP/spec.textproto" --summary "$TMP/nope.txt"
echo "step seconds: 1" >"$TMP/short.txt"
expect_exit2 bad_summary "--summary" "$WARPSIM" cost "$TMP/spec.textproto" --summary "$TMP/short.txt"
expect_exit2 no_with "--with" "$WARPSIM" cost "$TMP/bare.textproto" --with "$TMP/nope.textproto"
# Without the field, cost estimates the stall from the storage; with no storage either it must be given.
[[ $(value 'checkpoint seconds source' "$("$WARPSIM" cost "$SPEC")") == 'storage bandwidth estimate' ]] ||
  { echo "FAIL: no storage bandwidth estimate"; exit 1; }
sed -e 's/storage { targets: 2 /storage { targets: 0 /' "$SPEC" >"$TMP/nostorage.textproto"
cmp -s "$SPEC" "$TMP/nostorage.textproto" && { echo "FAIL: storage rewrite did not apply"; exit 1; }
expect_exit2 no_stall "reliability.checkpoint_seconds" "$WARPSIM" cost "$TMP/nostorage.textproto"
