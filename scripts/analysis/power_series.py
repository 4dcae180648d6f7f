#!/usr/bin/python3
"""Adds power and energy to a `warpsim run --output` results file of an experiment with a cost section.

For each kind it writes /series/<kind>/power_w ([component, sample], watts, the time average over each
sample interval) derived from the committed series on the same grid, and /components/<kind>/energy_j (the
integral of power_w over the grid), with the power model `warpsim run` used (the /summary/power_* values,
docs/energy-cost.md):
  gpu          idle + (busy - idle) x busy fraction            (series gpu/busy)
  nic          static + pJ/bit x bits transmitted / interval   (series nic/tx_bytes)
  switch_port  switch static / its ports + pJ/bit x bits / interval, NVSwitch (tier 0) or network switch
  storage      static + pJ/bit x bits read and written / interval
Hosts have no series: /summary/energy_host_j holds node static power x nodes x grid length, and
/summary/energy_series_j the total over all components plus hosts. The file is rewritten atomically (a copy
under a temporary name, then renamed over it), or written to --out.

usage: power_series.py RESULTS.h5 [--out FILE]
"""
import os
import shutil
import sys

import h5py
import numpy as np


def fail(message):
    sys.exit(f"power_series.py: error: {message}")


def scalar(f, name):
    key = f"summary/{name}"
    if key not in f:
        fail(f"no /{key} (was the run's experiment given a cost section?)")
    return float(f[key][()])


def write_power(f, kind, power, description):
    base = f"series/{kind}"
    if f"{base}/power_w" in f:
        del f[f"{base}/power_w"]
    # Grid and component attributes as the kind's other series have them.
    template = dict(f[f"{base}/{next(iter(f[base]))}"].attrs)
    ds = f.create_dataset(f"{base}/power_w", data=power, compression="gzip")
    for key in ("component_ids", "dimensions", "time"):
        if key in template:
            ds.attrs[key] = template[key]
    ds.attrs["unit"] = "W"
    ds.attrs["aggregation"] = "time_average"
    ds.attrs["description"] = description


def add_power(path):
    with h5py.File(path, "r+") as f:
        interval = f["series"].attrs["interval_ps"] * 1e-12
        p = {k: scalar(f, f"power_{k}") for k in (
            "gpu_idle_w", "gpu_busy_w", "node_w", "nic_w", "nic_pj_per_bit", "nvswitch_w", "nvswitch_pj_per_bit",
            "switch_w", "switch_pj_per_bit", "storage_w", "storage_pj_per_bit")}
        jpb = {k: p[f"{k}_pj_per_bit"] * 8e-12 for k in ("nic", "nvswitch", "switch", "storage")}
        energy = {}
        if "series/gpu/busy" in f:
            busy = f["series/gpu/busy"][()]
            power = p["gpu_idle_w"] + (p["gpu_busy_w"] - p["gpu_idle_w"]) * np.clip(busy, 0, 1)
            write_power(f, "gpu", power, "idle + (busy - idle) x busy fraction")
            energy["gpu"] = power
        if "series/nic/tx_bytes" in f:
            power = p["nic_w"] + jpb["nic"] * f["series/nic/tx_bytes"][()] / interval
            write_power(f, "nic", power, "static + energy per byte x bytes transmitted / interval")
            energy["nic"] = power
        if "series/switch_port/bytes" in f:
            switch_lp = f["components/switch_port/switch_lp"][()]
            tier = f["components/switch_port/tier"][()]
            # Series rows follow component_ids; components/* rows are in the same order (written together).
            _, inverse, ports = np.unique(switch_lp, return_inverse=True, return_counts=True)
            static = np.where(tier == 0, p["nvswitch_w"], p["switch_w"]) / ports[inverse]
            per_byte = np.where(tier == 0, jpb["nvswitch"], jpb["switch"])
            power = static[:, None] + per_byte[:, None] * f["series/switch_port/bytes"][()] / interval
            write_power(f, "switch_port", power, "switch static / its ports + energy per byte x bytes / interval")
            energy["switch_port"] = power
        if "series/storage/read_bytes" in f:
            moved = f["series/storage/read_bytes"][()] + f["series/storage/write_bytes"][()]
            power = p["storage_w"] + jpb["storage"] * moved / interval
            write_power(f, "storage", power, "static + energy per byte x bytes read and written / interval")
            energy["storage"] = power
        total = 0.0
        for kind, power in energy.items():
            joules = power.sum(axis=1) * interval
            name = f"components/{kind}/energy_j"
            if name in f:
                del f[name]
            f.create_dataset(name, data=joules).attrs["unit"] = "J"
            total += joules.sum()
        seconds = f["series/time"].shape[0] * interval
        nodes = int(f["components/gpu/node"][()].max()) + 1 if "components/gpu/node" in f else 0
        host = p["node_w"] * nodes * seconds
        for name, value, desc in (("energy_host_j", host, "node static power x nodes x grid length"),
                                  ("energy_series_j", total + host, "integral of every power_w series + hosts"),
                                  ("energy_grid_seconds", seconds, "length of the series grid")):
            if f"summary/{name}" in f:
                del f[f"summary/{name}"]
            ds = f.create_dataset(f"summary/{name}", data=value)
            ds.attrs["unit"] = "s" if name.endswith("seconds") else "J"
            ds.attrs["description"] = desc
        return total + host, seconds


def main():
    args = sys.argv[1:]
    if len(args) not in (1, 3) or (len(args) == 3 and args[1] != "--out"):
        fail("usage: power_series.py RESULTS.h5 [--out FILE]")
    src = args[0]
    if not os.path.isfile(src):
        fail(f"cannot read '{src}'")
    dst = args[2] if len(args) == 3 else src
    tmp = f"{dst}.tmp-{os.getpid()}"
    shutil.copyfile(src, tmp)
    try:
        joules, seconds = add_power(tmp)
    except BaseException:
        os.unlink(tmp)
        raise
    os.replace(tmp, dst)
    print(f"energy series joules: {joules:.6f}")
    print(f"energy grid seconds: {seconds:.12f}")


if __name__ == "__main__":
    main()
