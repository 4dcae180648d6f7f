#!/usr/bin/python3
"""Turn a warpsim results file (HDF5, docs/hdf5-layout.md) into PNG plots.

For every component kind in /series (or the --metric ones): a heatmap of the metric per component over
simulated time, and the distribution of the metric's per-component score across components; plus one bar
chart of /summary. Training results (`warpsim run --output`) also get the three plots docs/analysis.md
shows: gpu_utilization.png (GPU busy fraction heatmap over time), link_utilization.png (distribution of
switch-port utilization by tier) and step_breakdown.png (step time split into compute, pipeline bubble
and exposed communication).

Usage: /usr/bin/python3 scripts/analysis/plot_results.py RESULTS.h5 OUTDIR [--metric KIND/METRIC ...]
Needs Debian's python3-h5py, python3-numpy and python3-matplotlib (run it with /usr/bin/python3).
"""
import argparse
import os
import sys

import h5py
import matplotlib

matplotlib.use("Agg")  # files only: no display on cluster nodes or in CI
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

MAX_HEATMAP_ROWS = 512  # more components are averaged into this many bands so the image stays readable


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def time_axis(times_ps):
    """Sample start times in the largest unit that keeps them readable."""
    span = float(times_ps[-1]) if len(times_ps) else 0.0
    for unit, scale in (("s", 1e12), ("ms", 1e9), ("us", 1e6), ("ns", 1e3)):
        if span >= scale:
            return np.asarray(times_ps, dtype=float) / scale, unit
    return np.asarray(times_ps, dtype=float), "ps"


def score(values, aggregation):
    """One number per component: total for counters, peak for max gauges, mean for averaged gauges."""
    if values.shape[1] == 0:
        return np.zeros(values.shape[0]), "value"
    if aggregation == "max":
        return values.max(axis=1), "peak"
    if aggregation == "time_average":
        return values.mean(axis=1), "mean"
    return values.sum(axis=1), "total"


def plot_heatmap(ds, kind, metric, times, time_unit, path):
    values = ds[()]
    unit = text(ds.attrs.get("unit", ""))
    rows = values.shape[0]
    label = "component id"
    if rows > MAX_HEATMAP_ROWS:
        bands = np.array_split(np.arange(rows), MAX_HEATMAP_ROWS)
        values = np.stack([values[b].mean(axis=0) for b in bands])
        label = f"component id (bands of ~{rows // MAX_HEATMAP_ROWS}, mean)"
    fig, ax = plt.subplots(figsize=(10, 5))
    interval = times[1] - times[0] if len(times) > 1 else 1.0
    extent = [times[0] if len(times) else 0, (times[-1] + interval) if len(times) else 1, rows, 0]
    image = ax.imshow(values, aspect="auto", interpolation="nearest", extent=extent, cmap="viridis")
    fig.colorbar(image, ax=ax, label=f"{metric} [{unit}]")
    ax.set_xlabel(f"simulated time [{time_unit}]")
    ax.set_ylabel(label)
    ax.set_title(f"{kind}/{metric} per component over time")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_distribution(ds, kind, metric, path):
    values = ds[()]
    unit = text(ds.attrs.get("unit", ""))
    per_component, what = score(values, text(ds.attrs.get("aggregation", "sum")))
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.hist(per_component, bins=min(50, max(5, len(per_component) // 4)), color="tab:blue", edgecolor="white")
    ax.set_xlabel(f"{what} {metric} per component [{unit}]")
    ax.set_ylabel("components")
    if len(per_component):
        ax.set_title(
            f"{kind}/{metric}: {len(per_component)} components, "
            f"min {per_component.min():.4g}, median {np.median(per_component):.4g}, max {per_component.max():.4g}"
        )
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_summary(group, path):
    names = sorted(group.keys())
    values = [float(group[n][()]) for n in names]
    labels = [f"{n} [{text(group[n].attrs.get('unit', ''))}]" for n in names]
    fig, ax = plt.subplots(figsize=(9, 0.5 * len(names) + 1.5))
    bars = ax.barh(labels, values, color="tab:green")
    if values and min(values) > 0 and max(values) / min(values) > 100:
        ax.set_xscale("log")  # summary values span many magnitudes (counts next to rates)
    for bar, v in zip(bars, values):
        ax.text(bar.get_width(), bar.get_y() + bar.get_height() / 2, f" {v:.6g}", va="center")
    ax.set_title("run summary")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


TIER_NAMES = {0: "NVSwitch (NVLink)", 1: "leaf", 2: "spine / aggregation", 3: "core"}


def plot_gpu_utilization(f, times, time_unit, path):
    busy = f["series/gpu/busy"][()]
    gpus = busy.shape[0]
    # GPUs without work (beyond the job's world size) stay idle: show the job's GPUs only.
    active = np.flatnonzero(busy.sum(axis=1) > 0)
    shown = busy[: active.max() + 1] if len(active) else busy
    rows = shown.shape[0]
    label = "GPU id"
    if rows > MAX_HEATMAP_ROWS:
        bands = np.array_split(np.arange(rows), MAX_HEATMAP_ROWS)
        shown = np.stack([shown[b].mean(axis=0) for b in bands])
        label = f"GPU id (bands of ~{rows // MAX_HEATMAP_ROWS}, mean)"
    fig, ax = plt.subplots(figsize=(10, 5))
    interval = times[1] - times[0] if len(times) > 1 else 1.0
    extent = [times[0] if len(times) else 0, (times[-1] + interval) if len(times) else 1, rows, 0]
    image = ax.imshow(shown, aspect="auto", interpolation="nearest", extent=extent, cmap="magma", vmin=0, vmax=1)
    fig.colorbar(image, ax=ax, label="busy fraction (compute)")
    ax.set_xlabel(f"simulated time [{time_unit}]")
    ax.set_ylabel(label)
    ax.set_title(f"GPU utilization: {rows} of {gpus} GPUs, mean busy {busy[:rows].mean():.3f}")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def plot_link_utilization(f, path):
    interval_s = float(f["series"].attrs["interval_ps"]) * 1e-12
    nbytes = f["series/switch_port/bytes"][()]
    comps = f["components/switch_port"]
    tier = comps["tier"][()]
    capacity = comps["bandwidth_gbps"][()] * 1e9 / 8 * interval_s  # bytes one sample can carry
    util = nbytes / capacity[:, None]
    # The window in which the job ran: samples where any port carried traffic.
    busy_samples = np.flatnonzero(nbytes.sum(axis=0) > 0)
    window = util[:, busy_samples.min() : busy_samples.max() + 1] if len(busy_samples) else util
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
    bins = np.linspace(0, 1, 41)
    for t in sorted(set(tier.tolist())):
        sel = tier == t
        name = TIER_NAMES.get(int(t), f"tier {t}")
        left.hist(window[sel].mean(axis=1), bins=bins, histtype="step", linewidth=1.5, label=f"{name} ({sel.sum()})")
        samples = window[sel].ravel()
        right.hist(samples[samples > 0], bins=bins, histtype="step", linewidth=1.5, label=name)
    left.set_xlabel("mean utilization per port over the run")
    left.set_ylabel("ports")
    left.legend(fontsize=8)
    right.set_xlabel("utilization per port and sample (non-idle samples)")
    right.set_ylabel("port-samples")
    right.set_yscale("log")
    fig.suptitle(f"switch output-port utilization ({util.shape[0]} ports, {interval_s * 1e6:.4g} us samples)")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def step_breakdown_figure(summary):
    """The step-time breakdown as a figure: one stacked bar, plus one bar per what-if attribution."""
    def get(name):
        return float(summary[name][()]) if name in summary else 0.0

    parts = [
        ("compute", get("compute_seconds"), "tab:green"),
        ("pipeline bubble", get("pipeline_bubble_seconds"), "tab:orange"),
        ("exposed communication", get("exposed_communication_seconds"), "tab:red"),
    ]
    step = get("step_seconds")
    # What-if attribution (warpsim run --attribute), when present.
    attributed = sorted(n for n in summary if n.startswith("exposed_") and n not in ("exposed_communication_seconds",)
                        and n.endswith("seconds"))
    fig, ax = plt.subplots(figsize=(9, 3.2 + 0.3 * len(attributed)))
    left = 0.0
    for name, value, color in parts:
        ax.barh(["step"], [value], left=left, color=color, label=f"{name} {value * 1e3:.3f} ms")
        left += value
    for i, name in enumerate(attributed):
        ax.barh([name.removeprefix("exposed_").removesuffix("_seconds").replace("_", " ")], [get(name)],
                color="tab:purple")
    ax.axvline(step, color="black", linestyle="--", linewidth=1, label=f"step time {step * 1e3:.3f} ms")
    ax.set_xlabel("seconds per training step")
    mfu = get("mfu")
    ax.set_title(f"step-time breakdown (MFU {mfu:.3f}, {get('tflops_per_gpu'):.1f} TFLOP/s per GPU)")
    # The stacked bar spans the whole width (it sums to the step), so any legend inside the axes covers it:
    # the legend goes below the plot, in a strip that tight_layout leaves for it.
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=2, frameon=False)
    fig.tight_layout()
    return fig


def plot_step_breakdown(summary, path):
    fig = step_breakdown_figure(summary)
    fig.savefig(path, dpi=80)
    plt.close(fig)


def missing_rank_files(f, path):
    """The first rank file a per-rank result (--output-layout per-rank) lacks, or None. Without its rank
    files HDF5 reads fill values (NaN) instead of failing."""
    meta = f.get("meta")
    if meta is None or "rank_directory" not in meta.attrs:
        return None
    rank_dir = meta.attrs["rank_directory"]
    rank_dir = rank_dir.decode() if isinstance(rank_dir, bytes) else str(rank_dir)
    base = os.path.join(os.path.dirname(os.path.abspath(path)), rank_dir)
    for rank in range(int(meta.attrs["rank_files"])):
        name = os.path.join(base, f"rank-{rank:05d}.h5")
        if not os.path.exists(name):
            return name
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", help="HDF5 file written by warpsim --output")
    parser.add_argument("outdir", help="folder for the PNG files (created)")
    parser.add_argument("--metric", action="append", default=[], help="KIND/METRIC (default: each kind's first)")
    args = parser.parse_args()
    try:
        f = h5py.File(args.results, "r")
    except OSError as e:
        print(f"plot_results: error: cannot open {args.results}: {e}", file=sys.stderr)
        return 2
    missing = missing_rank_files(f, args.results)
    if missing:
        print(f"plot_results: error: {args.results} keeps its series in {missing}, which is missing "
              "(copy its rank directory along with the file)", file=sys.stderr)
        return 2
    os.makedirs(args.outdir, exist_ok=True)
    written = []
    with f:
        series = f["series"]
        times, time_unit = time_axis(series["time"][()])
        kinds = [k for k in series if isinstance(series[k], h5py.Group)]
        chosen = args.metric or [f"{k}/{next(iter(series[k]))}" for k in kinds if len(series[k])]
        for name in chosen:
            if name not in series:
                print(f"plot_results: error: --metric: no series '{name}' in {args.results}", file=sys.stderr)
                return 2
            kind, metric = name.split("/", 1)
            if 0 in series[name].shape:
                # A kind with no components (a cluster without storage targets) or no samples: there is nothing
                # to draw, and matplotlib would warn about a singular axis.
                print(f"plot_results: {name}: no components or samples, not plotted", file=sys.stderr)
                continue
            slug = f"{kind}_{metric}".replace("/", "_")
            heatmap = os.path.join(args.outdir, f"heatmap_{slug}.png")
            plot_heatmap(series[name], kind, metric, times, time_unit, heatmap)
            distribution = os.path.join(args.outdir, f"distribution_{slug}.png")
            plot_distribution(series[name], kind, metric, distribution)
            written += [heatmap, distribution]
        if "gpu" in series and "busy" in series["gpu"]:
            path = os.path.join(args.outdir, "gpu_utilization.png")
            plot_gpu_utilization(f, times, time_unit, path)
            written.append(path)
        if "switch_port" in series and "bytes" in series["switch_port"]:
            path = os.path.join(args.outdir, "link_utilization.png")
            plot_link_utilization(f, path)
            written.append(path)
        if "summary" in f and "step_seconds" in f["summary"]:
            path = os.path.join(args.outdir, "step_breakdown.png")
            plot_step_breakdown(f["summary"], path)
            written.append(path)
        if "summary" in f and len(f["summary"]):
            summary = os.path.join(args.outdir, "summary.png")
            plot_summary(f["summary"], summary)
            written.append(summary)
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
