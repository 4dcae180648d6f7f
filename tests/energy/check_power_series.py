#!/usr/bin/python3
"""Checks the power series that scripts/analysis/power_series.py added to a `warpsim run --output` file:
the integral of power over the grid, over every component plus the hosts, equals the energy `warpsim run`
computed from the LPs' final state ("it energy joules" over "energy seconds", plus the static power of the
whole cluster for the grid's tail past the run's end) within 0.1%; the GPU busy series integrates to the
summary's compute time within 0.1%; every power sample lies between the component's idle and peak power.

usage: check_power_series.py RESULTS.h5
"""
import sys

import h5py
import numpy as np

f = h5py.File(sys.argv[1], "r")
s = {k: float(f["summary"][k][()]) for k in f["summary"]}
dt = f["series"].attrs["interval_ps"] * 1e-12
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
tail = grid - s["energy_seconds"]
assert 0 <= tail < dt, (tail, dt)
check("energy joules", s["energy_series_j"], s["it_energy_joules"] + static * tail)
busy = f["series/gpu/busy"][()].sum() * dt
check("gpu busy seconds", busy, s["compute_seconds"] * gpus * s["steps"])
power = f["series/gpu/power_w"][()]
if power.min() < s["power_gpu_idle_w"] - 1e-9 or power.max() > s["power_gpu_busy_w"] + 1e-9:
    print("FAIL: gpu power outside [idle, busy]")
    ok = False
for kind in ("gpu", "nic", "switch_port", "storage"):
    e = f[f"components/{kind}/energy_j"][()]
    p = f[f"series/{kind}/power_w"][()]
    if not np.allclose(e, p.sum(axis=1) * dt, rtol=1e-12) or p.shape[1] != f["series/time"].shape[0]:
        print(f"FAIL: {kind} energy_j is not the integral of power_w")
        ok = False
sys.exit(0 if ok else 1)
