#!/usr/bin/env bash
# Power and energy series in the results file: `warpsim run --output` of the small economics experiment,
# sequential and optimistic on 2 ranks, writes /series/<kind>/power_w and /components/<kind>/energy_j itself;
# check_power_series.py checks energy = integral of power against the run's own energy (0.1%), and the
# power and energy of both runs are identical. Without a cost section (no power model) the file has none.
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
  $PY "$ROOT/tests/models/energy/check_power_series.py" "$TMP/$run.h5"
done
$PY - "$TMP/seq.h5" "$TMP/opt.h5" <<'PYEOF'
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1]), h5py.File(sys.argv[2])
for kind in ("gpu", "nic", "switch_port", "storage"):
    pa, pb = a[f"series/{kind}/power_w"][()], b[f"series/{kind}/power_w"][()]
    ia, ib = a[f"components/{kind}/id"][()], b[f"components/{kind}/id"][()]
    assert np.array_equal(ia, ib) and np.array_equal(pa, pb), f"{kind} power differs between seq and optimistic"
    ea, eb = a[f"components/{kind}/energy_j"][()], b[f"components/{kind}/energy_j"][()]
    assert np.array_equal(ea, eb), f"{kind} energy differs between seq and optimistic"
for name in ("energy_series_j", "energy_host_j", "energy_grid_seconds"):
    assert a[f"summary/{name}"][()] == b[f"summary/{name}"][()], f"/summary/{name} differs"
print("ok power and energy identical for sequential and optimistic on 2 ranks")
PYEOF
# Without a cost section there is no power model: no power or energy in the file (no made-up defaults).
awk '/^(cost|reliability) \{/{skip=1} !skip{print} /^\}/{skip=0}' "$SPEC" >"$TMP/bare.textproto"
"$WARPSIM" run "$TMP/bare.textproto" --sync sequential --progress-seconds 0 --output "$TMP/bare.h5" >/dev/null
$PY - "$TMP/bare.h5" <<'PYEOF'
import sys, h5py
f = h5py.File(sys.argv[1])
assert "series/gpu/busy" in f, "bare run wrote no series"
extra = [n for n in ("series/gpu/power_w", "components/gpu/energy_j", "summary/energy_series_j") if n in f]
assert not extra, f"power/energy without a power model: {extra}"
print("ok no cost section: no power or energy datasets")
PYEOF
