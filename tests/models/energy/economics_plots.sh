#!/usr/bin/env bash
# scripts/analysis/economics_plots.py as docs/energy-cost.md uses it: the goodput and breakdown plots of a
# `warpsim run` summary, the power plot of its results file (--power; the script itself refuses unless the
# power series integrate to the file's energy_series_j) and the comparison with the compute-only estimate of
# `warpsim cost` (--compare). Bad input exits 2 with one `economics_plots.py: error:` line.
set -euo pipefail
WARPSIM=$1
SPEC=$2
ROOT=$3
PY=/usr/bin/python3
PLOTS="$ROOT/scripts/analysis/economics_plots.py"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
"$WARPSIM" run "$SPEC" --sync sequential --progress-seconds 0 --output "$TMP/run.h5" >"$TMP/run.txt"
# The small spec's checkpoint stall is simulated; the estimate needs it given.
sed 's/^\( *checkpoint_interval_steps: 100\)$/\1 checkpoint_seconds: 0.02/' "$SPEC" >"$TMP/est.textproto"
grep -q 'checkpoint_seconds: 0.02' "$TMP/est.textproto"
"$WARPSIM" cost "$TMP/est.textproto" >"$TMP/est.txt"
$PY "$PLOTS" "$TMP/run.txt" "$TMP/p" --power "$TMP/run.h5" --compare "$TMP/est.txt"
for plot in goodput breakdown power compare; do
  [ -s "$TMP/p-$plot.png" ] || { echo "FAIL: no $plot plot"; exit 1; }
  [ "$(head -c 8 "$TMP/p-$plot.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
    { echo "FAIL: $plot plot is not a PNG"; exit 1; }
done
echo "ok four plots"

source "$(dirname "${BASH_SOURCE[0]}")/../../jobs/cli/expect_script_error.sh"
expect_error missing-summary "cannot read summary" "$TMP/none.txt" "$TMP/q"
grep -v '^goodput:' "$TMP/run.txt" >"$TMP/nogoodput.txt"
expect_error missing-key "'goodput'" "$TMP/nogoodput.txt" "$TMP/q"
expect_error missing-h5 "cannot open results file" "$TMP/run.txt" "$TMP/q" --power "$TMP/none.h5"
# A results file without a cost section has no power series.
awk '/^(cost|reliability) \{/{skip=1} !skip{print} /^\}/{skip=0}' "$SPEC" >"$TMP/bare.textproto"
"$WARPSIM" run "$TMP/bare.textproto" --sync sequential --progress-seconds 0 --output "$TMP/bare.h5" >/dev/null
expect_error no-power-series "has no /series/gpu/power_w" "$TMP/run.txt" "$TMP/q" --power "$TMP/bare.h5"
# A tampered energy total: the series no longer integrate to it.
cp "$TMP/run.h5" "$TMP/bad.h5"
$PY -c "import h5py,sys; f=h5py.File(sys.argv[1],'r+'); f['summary/energy_series_j'][()] *= 1.01" "$TMP/bad.h5"
expect_error energy-mismatch "power series integrate to" "$TMP/run.txt" "$TMP/q" --power "$TMP/bad.h5"
# Another job (other training run length) cannot be compared.
sed 's/^\(training run steps:\).*/\1 7/' "$TMP/est.txt" >"$TMP/other.txt"
expect_error other-job "another job" "$TMP/run.txt" "$TMP/q" --compare "$TMP/other.txt"
