#!/usr/bin/python3
"""Plots of the 16k-GPU shared-fabric worked example (docs/shared-clusters.md) from the results files of
`warpsim run --output`: per fabric, the step time of job a alone against jobs a and b sharing the fabric,
and the utilization of the leaves' up ports over simulated time, alone against shared.

Each CASE is LABEL=ALONE.h5,SHARED.h5: the experiment with job a only and the same experiment with both jobs.
A leaf's up ports are the tier-1 switch ports whose peer is a tier-2 switch. Before plotting, the script integrates
those ports' `bytes` series into busy time and checks that it reproduces the run's own
`/fabric/leaf_uplink_utilization` (busy time over ports x makespan), so the plot and warpsim cannot drift
apart. Bad input (missing file, dataset or key, a check that fails) exits 2 with one line.

usage: shared_fabric_plot.py OUT_PREFIX CASE [CASE ...]
  writes OUT_PREFIX-steps.png and OUT_PREFIX-uplinks.png
"""
import sys

import h5py
import numpy as np
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def fail(message):
    print(f"shared_fabric_plot.py: error: {message}", file=sys.stderr)
    sys.exit(2)


def scalar(f, path, name):
    if path not in f:
        fail(f"{name}: no dataset {path}")
    return float(f[path][()])


def read_run(path):
    """Step times per job, makespan, and the leaf up ports' utilization per sample."""
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        fail(f"cannot open results file '{path}': {e}")
    with f:
        jobs = sorted(f["jobs"].keys()) if "jobs" in f else []
        if not jobs:
            fail(f"{path}: no /jobs group (not an experiment with 'jobs')")
        steps = {j: scalar(f, f"jobs/{j}/step_seconds", path) for j in jobs}
        makespan = scalar(f, "summary/makespan_seconds", path)
        reported = scalar(f, "fabric/leaf_uplink_utilization", path)
        comp = f["components/switch_port"]
        tier = comp["tier"][()]
        switch_lp = comp["switch_lp"][()]
        peer = comp["peer_lp"][()]
        gbps = comp["bandwidth_gbps"][()]
        tier2 = set(switch_lp[tier == 2].tolist())
        up = (tier == 1) & np.isin(peer, list(tier2))  # empty ports have peer_lp -1
        if not up.any():
            fail(f"{path}: no leaf up ports in /components/switch_port")
        interval_s = float(f["series"].attrs["interval_ps"]) * 1e-12
        port_bytes = f["series/switch_port/bytes"][up, :]
        busy_s = port_bytes * 8 / (gbps[up][:, None] * 1e9)  # [port, sample]
        ports = int(up.sum())
        integrated = busy_s.sum() / (ports * makespan)
        if abs(integrated - reported) > 1e-6 + 1e-4 * abs(reported):
            fail(f"{path}: the up ports' bytes give utilization {integrated:.6f}, the run reports {reported:.6f}")
        per_sample = busy_s.sum(axis=0) / (ports * interval_s)
        time_s = np.arange(per_sample.size) * interval_s
        return {"steps": steps, "makespan": makespan, "util": reported, "time": time_s, "series": per_sample}


def main(argv):
    if len(argv) < 3:
        fail("usage: shared_fabric_plot.py OUT_PREFIX LABEL=ALONE.h5,SHARED.h5 [...]")
    prefix = argv[1]
    cases = []
    for arg in argv[2:]:
        label, sep, files = arg.partition("=")
        alone, comma, shared = files.partition(",")
        if not sep or not comma or not label:
            fail(f"case '{arg}': expected LABEL=ALONE.h5,SHARED.h5")
        cases.append((label, read_run(alone), read_run(shared)))

    fig, ax = plt.subplots(figsize=(7, 4))
    width = 0.25
    for i, (label, alone, shared) in enumerate(cases):
        a = alone["steps"]["a"]
        bars = [a, shared["steps"]["a"], shared["steps"].get("b", float("nan"))]
        for k, (v, name) in enumerate(zip(bars, ["job a alone", "job a shared", "job b shared"])):
            ax.bar(i + (k - 1) * width, v, width, label=name if i == 0 else None, color=f"C{k}")
            ax.text(i + (k - 1) * width, v, f"{v:.3f}", ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(cases)), [c[0] for c in cases])
    ax.set_ylabel("step time (s)")
    ax.set_title("Two 8192-GPU jobs on one 16,384-GPU fabric")
    top = max(max(v for v in c[1]["steps"].values()) for c in cases)
    top = max(top, max(max(v for v in c[2]["steps"].values()) for c in cases))
    ax.set_ylim(0, top * 1.25)
    ax.legend(loc="upper left", ncol=3, fontsize=8)
    fig.tight_layout()
    fig.savefig(f"{prefix}-steps.png", dpi=110)

    fig, axes = plt.subplots(len(cases), 1, figsize=(8, 2.6 * len(cases)), squeeze=False)
    for ax, (label, alone, shared) in zip(axes[:, 0], cases):
        ax.plot(alone["time"], alone["series"], label=f"job a alone (mean {alone['util']:.3f})")
        ax.plot(shared["time"], shared["series"], label=f"jobs a and b (mean {shared['util']:.3f})")
        ax.set_title(label, fontsize=10)
        ax.set_ylabel("leaf up-port\nutilization")
        ax.set_ylim(0, 1.05)
        ax.legend(loc="upper left", fontsize=8)
    axes[-1, 0].set_xlabel("simulated time (s)")
    fig.tight_layout()
    fig.savefig(f"{prefix}-uplinks.png", dpi=110)
    for label, alone, shared in cases:
        steps = ", ".join(f"{j} {v:.6f} s" for j, v in shared["steps"].items())
        print(f"{label}: alone a {alone['steps']['a']:.6f} s, shared {steps}; "
              f"leaf uplink utilization {alone['util']:.4f} alone, {shared['util']:.4f} shared")


if __name__ == "__main__":
    main(sys.argv)
