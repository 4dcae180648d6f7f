#!/usr/bin/python3
"""Checks the power and energy series `warpsim run --output` wrote (models/energy/power_series.hpp): the
integral of power over the grid, over every component plus the hosts, equals the energy `warpsim run`
computed from the LPs' final state ("it energy joules" over "energy seconds", plus the static power of the
whole cluster for the grid's tail past the run's end) within 0.1%; the GPU busy series integrates to the
summary's compute time within 0.1%; every GPU power sample lies between idle and busy power; each
component's energy_j is the integral of its power_w (each sample counted with its true length).

usage: check_power_series.py RESULTS.h5
"""
import sys

import h5py
import numpy as np

f = h5py.File(sys.argv[1], "r")
s = {k: float(f["summary"][k][()]) for k in f["summary"]}
interval_ps = int(f["series"].attrs["interval_ps"])
end_ps = int(f["series"].attrs["end_time_ps"])
starts = f["series/time"][()].astype(np.int64)
lengths = (np.minimum(starts + interval_ps, end_ps) - starts) * 1e-12  # seconds per sample
grid = s["energy_grid_seconds"]
ok = True


def check(name, got, want, tol=1e-3):
    global ok
    rel = abs(got - want) / abs(want)
    print(f"{'ok' if rel <= tol else 'FAIL'} {name}: series {got:.6f}, expected {want:.6f} (rel {rel:.2e})")
    ok &= rel <= tol


gpus = f["components/gpu/id"].shape[0]
nodes = int(f["components/gpu/node"][()].max()) + 1
tier = f["components/switch_port/tier"][()]
switch_lp = f["components/switch_port/switch_lp"][()]
nvswitches = len(np.unique(switch_lp[tier == 0]))
switches = len(np.unique(switch_lp[tier != 0]))
nics = f["components/nic/id"].shape[0]
targets = f["components/storage/id"].shape[0]
static = (gpus * s["power_gpu_idle_w"] + nodes * s["power_node_w"] + nics * s["power_nic_w"] +
          nvswitches * s["power_nvswitch_w"] + switches * s["power_switch_w"] + targets * s["power_storage_w"])
check("grid seconds", grid, end_ps * 1e-12, 1e-12)
tail = grid - s["energy_seconds"]
assert 0 <= tail < interval_ps * 1e-12, (tail, interval_ps)
check("energy joules", s["energy_series_j"], s["it_energy_joules"] + static * tail)
busy = (f["series/gpu/busy"][()] * lengths).sum()
check("gpu busy seconds", busy, s["compute_seconds"] * gpus * s["steps"])
power = f["series/gpu/power_w"][()]
if power.min() < s["power_gpu_idle_w"] - 1e-9 or power.max() > s["power_gpu_busy_w"] + 1e-9:
    print("FAIL: gpu power outside [idle, busy]")
    ok = False
total = s["energy_host_j"]
for kind in ("gpu", "nic", "switch_port", "storage"):
    e = f[f"components/{kind}/energy_j"][()]
    ds = f[f"series/{kind}/power_w"]
    p = ds[()]
    if (not np.allclose(e, (p * lengths).sum(axis=1), rtol=1e-12) or p.shape[1] != starts.shape[0] or
            ds.attrs["unit"] != "W" or f[f"components/{kind}/energy_j"].attrs["unit"] != "J"):
        print(f"FAIL: {kind} energy_j is not the integral of power_w (or units are wrong)")
        ok = False
    total += e.sum()
check("energy_series_j = hosts + sum of energy_j", s["energy_series_j"], total, 1e-12)
sys.exit(0 if ok else 1)
