#!/usr/bin/env bash
# scripts/analysis/shared_fabric_plot.py as docs/shared-clusters.md uses it (scripts/shared-16k-example.sh),
# on the small oversubscribed two-job experiment: job a alone and both jobs, each with --output; the script
# itself refuses to plot unless the leaf up ports' byte series reproduce each run's
# /fabric/leaf_uplink_utilization. Bad input exits 2 with one `shared_fabric_plot.py: error:` line.
# Args: path/to/warpsim.
set -euo pipefail
WARPSIM=$1
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PLOTS="$DIR/../../../scripts/analysis/shared_fabric_plot.py"
PY=/usr/bin/python3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cp "$DIR/job_tiny.textproto" "$DIR/two_jobs_oversubscribed.textproto" "$TMP/"
grep -v 'name: "b"' "$TMP/two_jobs_oversubscribed.textproto" >"$TMP/alone.textproto"
for spec in alone two_jobs_oversubscribed; do
  "$WARPSIM" run "$TMP/$spec.textproto" --sync sequential --progress-seconds 0 --output "$TMP/$spec.h5" >"$TMP/$spec.txt"
done
out=$($PY "$PLOTS" "$TMP/p" "oversubscribed=$TMP/alone.h5,$TMP/two_jobs_oversubscribed.h5")
echo "$out"
for plot in steps uplinks; do
  [ "$(head -c 8 "$TMP/p-$plot.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
    { echo "FAIL: no $plot plot (PNG)"; exit 1; }
done
# The printed figures are the runs' own.
a=$(sed -n 's/^job a step seconds: //p' "$TMP/alone.txt")
grep -q "alone a $a" <<<"$out" || { echo "FAIL: the plot's alone step is not the run's $a"; exit 1; }
echo "ok two plots"

source "$DIR/../../jobs/cli/expect_script_error.sh"
expect_error missing-file "cannot open results file" "$TMP/q" "x=$TMP/none.h5,$TMP/alone.h5"
expect_error bad-case "expected LABEL=ALONE.h5,SHARED.h5" "$TMP/q" "x=$TMP/alone.h5"
# A one-job run has no /jobs group.
"$WARPSIM" run "$DIR/../../models/training/small.textproto" --sync sequential --progress-seconds 0 --output "$TMP/one.h5" >/dev/null
expect_error not-jobs "no /jobs group" "$TMP/q" "x=$TMP/one.h5,$TMP/alone.h5"
