#!/usr/bin/python3
"""Plots of an experiment's economics from the `key: value` output of `warpsim cost` or `warpsim run`
(with cost and reliability sections): goodput against the checkpoint interval, and the training run's cost,
carbon and energy breakdown. Used for docs/energy-cost.md.

The goodput curve is Daly's expected-time model (models/reliability/checkpoint_model.hpp) evaluated with
the run's system MTBF, checkpoint stall and restart time; the script checks that it reproduces the
`goodput` key at the configured interval before plotting, so the plot and warpsim cannot drift apart.

usage: economics_plots.py SUMMARY.txt OUT_PREFIX   (writes OUT_PREFIX-goodput.png, OUT_PREFIX-breakdown.png)
"""
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_summary(path):
    values = {}
    with open(path) as f:
        for line in f:
            key, sep, value = line.rstrip("\n").partition(": ")
            if not sep:
                continue
            try:
                values[key] = float(value)
            except ValueError:
                values[key] = value
    return values


def need(values, key):
    if key not in values:
        sys.exit(f"economics_plots.py: error: the summary has no '{key}' line (cost/reliability sections?)")
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
        sys.exit(f"economics_plots.py: error: model goodput {g:.4f} != summary goodput {v['goodput']}")
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


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    v = read_summary(sys.argv[1])
    plot_goodput(v, sys.argv[2] + "-goodput.png")
    plot_breakdown(v, sys.argv[2] + "-breakdown.png")


if __name__ == "__main__":
    main()
