#!/usr/bin/env bash
# scripts/analysis/resilience_plot.py as docs/energy-cost.md uses it ("A 16k-GPU day with failures"), on the
# small resilience experiment: a PNG, and the script's own check that the results file's /resilience tables
# reproduce the run's `simulated failures` and `simulated steps`. Bad input exits 2 with one
# `resilience_plot.py: error:` line. Args: path/to/warpsim SPEC.
set -euo pipefail
WARPSIM=$1
SPEC=$2
PLOTS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/../../../scripts/analysis/resilience_plot.py"
PY=/usr/bin/python3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
"$WARPSIM" run "$SPEC" --sync sequential --progress-seconds 0 --output "$TMP/run.h5" >"$TMP/run.txt"
out=$($PY "$PLOTS" "$TMP/run.h5" "$TMP/day.png")
echo "$out"
[ "$(head -c 8 "$TMP/day.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || { echo "FAIL: no PNG"; exit 1; }
failures=$(sed -n 's/^simulated failures: //p' "$TMP/run.txt")
[ "$failures" -gt 0 ] || { echo "FAIL: the small experiment should fail at least once"; exit 1; }
grep -q ": $failures failures, " <<<"$out" || { echo "FAIL: the plot's failures are not the run's $failures"; exit 1; }
echo "ok plot"

source "$(dirname "${BASH_SOURCE[0]}")/../../jobs/cli/expect_script_error.sh"
expect_error missing-file "cannot open results file" "$TMP/none.h5" "$TMP/x.png"
expect_error usage "usage" "$TMP/run.h5"
# A run without simulate_failures has no /resilience tables.
grep -v 'simulate_failures' "$SPEC" >"$TMP/plain.textproto"
"$WARPSIM" run "$TMP/plain.textproto" --sync sequential --progress-seconds 0 --output "$TMP/plain.h5" >/dev/null
expect_error no-tables "no dataset resilience/progress/time_s" "$TMP/plain.h5" "$TMP/x.png"
