#!/usr/bin/python3
"""Plots of an experiment's economics from the `key: value` output of `warpsim cost` or `warpsim run`
(with cost and reliability sections): goodput against the checkpoint interval, and the training run's cost,
carbon and energy breakdown; optionally the cluster's power over the simulated step from the results file of
`warpsim run --output` (--power), and a comparison of two summaries of the same experiment, e.g. the
compute-only estimate of `warpsim cost` against a simulated step (--compare). Used for docs/energy-cost.md.

The goodput curve is Daly's expected-time model (models/reliability/checkpoint_model.hpp) evaluated with
the run's system MTBF, checkpoint stall and restart time; the script checks that it reproduces the
`goodput` key at the configured interval before plotting, so the plot and warpsim cannot drift apart. Likewise
the power plot integrates the file's power series and refuses to plot unless that reproduces the file's
`energy_series_j`. Bad input (missing file, key or dataset; mismatched checks) exits 2 with one line.

usage: economics_plots.py SUMMARY.txt OUT_PREFIX [--power RESULTS.h5] [--compare OTHER.txt]
  writes OUT_PREFIX-goodput.png, OUT_PREFIX-breakdown.png, and with the options OUT_PREFIX-power.png,
  OUT_PREFIX-compare.png (OTHER.txt's figures against SUMMARY.txt's)
"""
import argparse
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def fail(message):
    print(f"economics_plots.py: error: {message}", file=sys.stderr)
    sys.exit(2)


def read_summary(path):
    values = {}
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        fail(f"cannot read summary '{path}': {e.strerror}")
    for line in lines:
        key, sep, value = line.partition(": ")
        if not sep:
            continue
        try:
            values[key] = float(value)
        except ValueError:
            values[key] = value
    return values


def need(values, key):
    if key not in values:
        fail(f"the summary has no '{key}' line (cost/reliability sections?)")
    return values[key]


def goodput(interval_s, mtbf_s, checkpoint_s, restart_s):
    segment = mtbf_s * math.exp(restart_s / mtbf_s) * math.expm1((interval_s + checkpoint_s) / mtbf_s)
    return interval_s / segment


def plot_goodput(v, out):
    m = need(v, "system mtbf hours") * 3600
    c = need(v, "checkpoint seconds")
    r = need(v, "restart seconds")
    configured = need(v, "checkpoint interval seconds")
    optimum = need(v, "optimal checkpoint interval seconds")
    young = need(v, "young checkpoint interval seconds")
    g = goodput(configured, m, c, r)
    if abs(g - need(v, "goodput")) > 1e-3:
        fail(f"model goodput {g:.4f} != summary goodput {v['goodput']}")
    lo, hi = max(c, 1.0) / 4, m * 2
    xs = [lo * (hi / lo) ** (i / 400) for i in range(401)]
    fig, ax = plt.subplots(figsize=(6.4, 4))
    ax.plot([x / 60 for x in xs], [goodput(x, m, c, r) for x in xs], color="tab:blue", label="expected goodput")
    ax.axvline(optimum / 60, color="tab:green", ls="--", label=f"optimum {optimum / 60:.1f} min")
    ax.axvline(young / 60, color="tab:orange", ls=":", label=f"Young sqrt(2CM) {young / 60:.1f} min")
    ax.plot([configured / 60], [g], "o", color="tab:red", label=f"configured {configured / 60:.1f} min")
    if "monte carlo goodput" in v:
        ax.plot([configured / 60], [v["monte carlo goodput"]], "x", color="black", ms=9,
                label=f"Monte-Carlo ({int(v['monte carlo trials'])} runs)")
    ax.set_xscale("log")
    ax.set_xlabel("checkpoint interval (minutes of training)")
    ax.set_ylabel("goodput (useful / wall time)")
    ax.set_title(f"{v.get('experiment', '')}: MTBF {m / 3600:.2f} h, C {c:.0f} s, R {r:.0f} s")
    ax.set_ylim(0, 1)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="lower center", fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def plot_breakdown(v, out):
    fig, axes = plt.subplots(1, 3, figsize=(10, 3.6))
    capex = need(v, "training run capex usd") / 1e6
    power = need(v, "training run electricity usd") / 1e6
    axes[0].bar(["capex share", "electricity"], [capex, power], color=["tab:blue", "tab:orange"])
    axes[0].set_ylabel("million USD")
    axes[0].set_title(f"cost of the run: {capex + power:.1f} M USD")
    op = need(v, "training run operating tco2e")
    emb = need(v, "training run embodied tco2e")
    axes[1].bar(["operating", "embodied share"], [op, emb], color=["tab:red", "tab:gray"])
    axes[1].set_ylabel("t CO2e")
    axes[1].set_title(f"carbon of the run: {op + emb:,.0f} t CO2e")
    shares = {k: need(v, f"{k} energy share") for k in ("gpu", "network", "host", "storage")}
    axes[2].bar(list(shares), list(shares.values()), color="tab:green")
    axes[2].set_ylabel("share of IT energy")
    axes[2].set_title(f"IT energy: {need(v, 'it energy joules per token'):.2f} J/token")
    fig.suptitle(f"{v.get('experiment', '')}: {need(v, 'training run days'):.1f} days, "
                 f"{need(v, 'training run facility energy mwh'):,.0f} MWh (facility)")
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def plot_power(path, out):
    """Stacked power of the cluster per component kind over the simulated step, and the GPUs' mean busy
    fraction under it (where the step computes, waits on the pipeline bubble or on communication)."""
    try:
        import h5py
        import numpy as np
        f = h5py.File(path, "r")
    except OSError as e:
        fail(f"cannot open results file '{path}': {e}")
    for name in ("series/time", "series/gpu/power_w", "series/gpu/busy", "summary/energy_series_j",
                 "summary/energy_host_j", "summary/energy_grid_seconds"):
        if name not in f:
            fail(f"'{path}' has no /{name} (a `warpsim run --output` of an experiment with a cost section?)")
    interval_ps = int(f["series"].attrs["interval_ps"])
    end_ps = int(f["series"].attrs["end_time_ps"])
    starts = f["series/time"][()].astype(np.int64)
    lengths = (np.minimum(starts + interval_ps, end_ps) - starts) * 1e-12
    grid_s = float(f["summary/energy_grid_seconds"][()])
    host_w = float(f["summary/energy_host_j"][()]) / grid_s
    stacks = {"GPUs": f["series/gpu/power_w"][()].sum(axis=0)}
    if "series/nic/power_w" in f:
        stacks["NICs"] = f["series/nic/power_w"][()].sum(axis=0)
    if "series/switch_port/power_w" in f:
        port = f["series/switch_port/power_w"][()]
        tier = f["components/switch_port/tier"][()]
        stacks["NVSwitches"] = port[tier == 0].sum(axis=0)
        stacks["switches"] = port[tier != 0].sum(axis=0)
    if "series/storage/power_w" in f:
        stacks["storage"] = f["series/storage/power_w"][()].sum(axis=0)
    stacks["hosts"] = np.full(starts.shape[0], host_w)
    energy = sum(float((p * lengths).sum()) for p in stacks.values())
    want = float(f["summary/energy_series_j"][()])
    if abs(energy - want) > 1e-6 * want:
        fail(f"the power series integrate to {energy:.6e} J, /summary/energy_series_j is {want:.6e} J")
    busy = f["series/gpu/busy"][()].mean(axis=0)
    t = (starts + 0.5 * lengths * 1e12) * 1e-12
    fig, (ax, bx) = plt.subplots(2, 1, figsize=(7.5, 5.2), sharex=True, height_ratios=[2.2, 1])
    ax.stackplot(t, [p / 1e6 for p in stacks.values()], labels=list(stacks), step="mid")
    ax.set_ylabel("IT power (MW)")
    ax.set_title(f"{f['meta'].attrs.get('experiment', '')}: {energy / 1e6:,.4g} MJ over {grid_s:.4g} s "
                 f"(mean {energy / grid_s / 1e6:.4g} MW)")
    ax.legend(loc="lower left", fontsize=8, ncol=3)
    ax.grid(True, alpha=0.3)
    bx.plot(t, busy, drawstyle="steps-mid", color="tab:blue")
    bx.set_ylim(0, 1)
    bx.set_ylabel("mean GPU busy")
    bx.set_xlabel("simulated time (s)")
    bx.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def plot_compare(base, other, base_path, other_path, out):
    """Step composition and the per-token figures of two summaries of one experiment side by side."""
    def label(v, path):
        kind = "simulated step" if v.get("model") == "training" else str(v.get("step source", "?"))
        return f"{kind}\n{path.rsplit('/', 1)[-1]}"

    names = [label(other, other_path), label(base, base_path)]
    runs = [other, base]
    if need(other, "training run steps") != need(base, "training run steps"):
        fail(f"'{other_path}' is another job: {other['training run steps']:.0f} training steps, "
             f"'{base_path}' has {base['training run steps']:.0f}")
    fig, axes = plt.subplots(1, 4, figsize=(13, 4.2))
    # Step = mean GPU compute + pipeline bubble of the compute-only schedule + the rest (exposed communication,
    # stragglers); `warpsim cost` without --summary has no communication, so its rest is 0.
    parts = {"compute (mean GPU)": [], "pipeline bubble": [], "exposed communication, stragglers": []}
    for v in runs:
        step, compute = need(v, "step seconds"), need(v, "compute seconds")
        bubble = v.get("pipeline bubble seconds", step - compute)
        parts["compute (mean GPU)"].append(compute)
        parts["pipeline bubble"].append(bubble)
        parts["exposed communication, stragglers"].append(max(0.0, step - compute - bubble))
    bottom = [0.0, 0.0]
    for (name, vals), color in zip(parts.items(), ("tab:green", "tab:gray", "tab:red")):
        axes[0].bar(names, vals, bottom=bottom, color=color, label=name)
        bottom = [b + x for b, x in zip(bottom, vals)]
    axes[0].set_ylabel("seconds per step")
    axes[0].set_ylim(0, max(bottom) * 1.45)
    axes[0].legend(fontsize=7, loc="upper left")
    axes[0].set_title(f"step: {bottom[0]:.3g} -> {bottom[1]:.3g} s ({(bottom[1] / bottom[0] - 1) * 100:+.1f}%)",
                      fontsize=9)
    for ax, key, unit in ((axes[1], "cost usd per million tokens", "USD per million tokens"),
                          (axes[2], "carbon kgco2e per million tokens", "kg CO2e per million tokens"),
                          (axes[3], "training run days", "days for the training run")):
        vals = [need(v, key) for v in runs]
        ax.bar(names, vals, color=["tab:orange", "tab:blue"])
        ax.set_title(f"{unit}\n{vals[0]:.3g} -> {vals[1]:.3g} ({(vals[1] / vals[0] - 1) * 100:+.1f}%)",
                     fontsize=9)
    for ax in axes:
        ax.tick_params(axis="x", labelsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("summary", help="`warpsim cost` or `warpsim run` output (key: value lines)")
    parser.add_argument("out_prefix", help="writes OUT_PREFIX-goodput.png, OUT_PREFIX-breakdown.png, ...")
    parser.add_argument("--power", metavar="RESULTS.h5", help="`warpsim run --output` file: power plot")
    parser.add_argument("--compare", metavar="OTHER.txt", help="another summary of the experiment to compare")
    a = parser.parse_args()
    v = read_summary(a.summary)
    other = read_summary(a.compare) if a.compare else None
    plot_goodput(v, a.out_prefix + "-goodput.png")
    plot_breakdown(v, a.out_prefix + "-breakdown.png")
    if a.power:
        plot_power(a.power, a.out_prefix + "-power.png")
    if other is not None:
        plot_compare(v, other, a.summary, a.compare, a.out_prefix + "-compare.png")


if __name__ == "__main__":
    main()
