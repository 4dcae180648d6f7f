#!/usr/bin/env bash
# Power and energy series in the results file: `warpsim run --output` of the small economics experiment,
# sequential and optimistic on 2 ranks, then scripts/analysis/power_series.py adds /series/<kind>/power_w;
# check_power_series.py checks energy = integral of power against the run's own energy (0.1%), and the
# power series of both runs are identical.
set -euo pipefail
WARPSIM=$1
SPEC=$2
ROOT=$3
MPIEXEC=${WARPSIM_MPIEXEC:-mpiexec --oversubscribe --allow-run-as-root}
PY=/usr/bin/python3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
"$WARPSIM" run "$SPEC" --sync sequential --progress-seconds 0 --output "$TMP/seq.h5" >/dev/null
$MPIEXEC -np 2 "$WARPSIM" run "$SPEC" --sync optimistic --progress-seconds 0 --output "$TMP/opt.h5" >/dev/null
for run in seq opt; do
  $PY "$ROOT/scripts/analysis/power_series.py" "$TMP/$run.h5"
  $PY "$ROOT/tests/energy/check_power_series.py" "$TMP/$run.h5"
done
$PY - "$TMP/seq.h5" "$TMP/opt.h5" <<'PYEOF'
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1]), h5py.File(sys.argv[2])
for kind in ("gpu", "nic", "switch_port", "storage"):
    pa, pb = a[f"series/{kind}/power_w"][()], b[f"series/{kind}/power_w"][()]
    ia, ib = a[f"series/{kind}/power_w"].attrs["component_ids"], b[f"series/{kind}/power_w"].attrs["component_ids"]
    assert np.array_equal(ia, ib) and np.array_equal(pa, pb), f"{kind} power differs between seq and optimistic"
print("ok power series identical for sequential and optimistic on 2 ranks")
PYEOF
# Without a cost section there is no power model in the file: one clear error.
awk '/^(cost|reliability) \{/{skip=1} !skip{print} /^\}/{skip=0}' "$SPEC" >"$TMP/bare.textproto"
"$WARPSIM" run "$TMP/bare.textproto" --sync sequential --progress-seconds 0 --output "$TMP/bare.h5" >/dev/null
code=0
err=$($PY "$ROOT/scripts/analysis/power_series.py" "$TMP/bare.h5" 2>&1) || code=$?
[[ $code -ne 0 ]] && grep -q "cost section" <<<"$err" || { echo "FAIL: no-cost file: $code $err"; exit 1; }
echo "ok no cost section: $err"
