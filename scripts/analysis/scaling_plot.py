#!/usr/bin/python3
"""Strong-scaling table and plot from scripts/scaling-study.sh's CSV (docs/scale.md).

Per experiment, against its 1-rank run: speedup = wall(1) / wall(n), efficiency = speedup / n, and the
peak RSS per rank (largest rank) as a fraction of the 1-rank figure, raw and with the RSS floor of an MPI
process that only parses the spec subtracted (both sides). Writes OUT/scaling.md (markdown table) and
OUT/scaling.png (five panels: wall seconds, committed events/s, efficiency, rollback share, peak RSS per rank;
one line per experiment and sync mode), or the --plot path. Runs that failed or timed out are in the table only.

Usage: scaling_plot.py scaling.csv [--out DIR] [--plot FILE.png]
  docs/scale.md: scaling_plot.py docs/scale/scaling.csv --plot docs/img/scaling.png
"""
import argparse
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def load(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit(f"{path}: no rows")
    for r in rows:
        r["ranks"] = int(r["ranks"])
        for k in ("events_committed", "wall_seconds", "committed_events_per_second", "peak_rss_bytes_max",
                  "peak_rss_bytes_total", "rss_floor_bytes_max", "load_1min", "step_seconds",
                  "rollback_share", "cpu_share_min"):
            r[k] = number(r.get(k))
    return rows


def derive(rows):
    # Grouped by spec file; a run that failed or timed out printed no experiment name.
    names = {r["spec"]: r["experiment"] for r in rows if r["experiment"]}
    by_exp = {}
    for r in rows:
        by_exp.setdefault(names.get(r["spec"], r["spec"]), []).append(r)
    for runs in by_exp.values():
        runs.sort(key=lambda r: r["ranks"])
        base = next((r for r in runs if r["ranks"] == 1 and r["status"] == "ok"), None)
        for r in runs:
            r["speedup"] = r["efficiency"] = r["rss_ratio"] = r["rss_ratio_floor"] = None
            if base is None or r["status"] != "ok" or not r["wall_seconds"]:
                continue
            r["speedup"] = base["wall_seconds"] / r["wall_seconds"]
            r["efficiency"] = r["speedup"] / r["ranks"]
            if base["peak_rss_bytes_max"] and r["peak_rss_bytes_max"]:
                r["rss_ratio"] = r["peak_rss_bytes_max"] / base["peak_rss_bytes_max"]
                fb, fr = base["rss_floor_bytes_max"] or 0, r["rss_floor_bytes_max"] or 0
                if base["peak_rss_bytes_max"] > fb:
                    r["rss_ratio_floor"] = (r["peak_rss_bytes_max"] - fr) / (base["peak_rss_bytes_max"] - fb)
    return by_exp


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def mib(v):
    return None if v is None else v / 2**20


def table(by_exp):
    lines = [
        "| experiment | ranks | sync | status | events committed | wall s | events/s | speedup | efficiency "
        "| rollback share | cpu share min | peak RSS/rank MiB | floor MiB | RSS ratio raw | RSS ratio - floor | load "
        "| digest |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for exp, runs in by_exp.items():
        for r in runs:
            lines.append(
                f"| {exp} | {r['ranks']} | {r['sync']} | {r['status']} | {fmt(r['events_committed'], '.0f')} "
                f"| {fmt(r['wall_seconds'], '.1f')} | {fmt(r['committed_events_per_second'], '.3g')} "
                f"| {fmt(r['speedup'], '.2f')} | {fmt(r['efficiency'], '.2f')} "
                f"| {fmt(r.get('rollback_share'), '.3f')} | {fmt(r.get('cpu_share_min'), '.2f')} "
                f"| {fmt(mib(r['peak_rss_bytes_max']), '.1f')} | {fmt(mib(r['rss_floor_bytes_max']), '.1f')} "
                f"| {fmt(r['rss_ratio'], '.2f')} | {fmt(r['rss_ratio_floor'], '.2f')} | {fmt(r['load_1min'], '.2f')} "
                f"| {r.get('state_digest') or '-'} |")
    return "\n".join(lines) + "\n"


def plot(by_exp, path):
    fig, axes = plt.subplots(1, 5, figsize=(20, 3.8))
    panels = [("wall_seconds", "wall seconds", 1), ("committed_events_per_second", "committed events/s", 1),
              ("efficiency", "strong-scaling efficiency", 1), ("rollback_share", "rolled back / processed", 1),
              ("peak_rss_bytes_max", "peak RSS per rank (MiB)", 1 / 2**20)]
    for ax, (key, label, scale) in zip(axes, panels):
        for exp, runs in by_exp.items():
            # One line per sync mode (a sequential 1-rank base is a single point).
            for sync in sorted({r["sync"] for r in runs}):
                pts = [(r["ranks"], r[key] * scale) for r in runs
                       if r["sync"] == sync and r.get(key) is not None]
                if pts:
                    ax.plot(*zip(*pts), marker="o" if len(pts) > 1 else "s", label=f"{exp} ({sync})")
        if key in ("efficiency", "rollback_share"):
            ax.axhline(1.0, color="grey", lw=0.8, ls="--")
            ax.set_ylim(bottom=0)
        if key == "peak_rss_bytes_max":
            for exp, runs in by_exp.items():
                pts = [(r["ranks"], r["rss_floor_bytes_max"] * scale) for r in runs if r["rss_floor_bytes_max"]]
                if pts:
                    ax.plot(*zip(*pts), ls=":", marker=".", color="grey", label=f"{exp}: MPI floor")
        ax.set_xlabel("ranks")
        ax.set_title(label, fontsize=10)
        ax.set_xticks(sorted({r["ranks"] for runs in by_exp.values() for r in runs}))
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    axes[4].legend(fontsize=7)
    fig.tight_layout()
    tmp = path + ".tmp.png"
    fig.savefig(tmp, dpi=110)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("--out", default=None, help="output folder (default: the CSV's)")
    ap.add_argument("--plot", default=None, help="plot file (default: OUT/scaling.png)")
    a = ap.parse_args()
    out = a.out or os.path.dirname(os.path.abspath(a.csv))
    by_exp = derive(load(a.csv))
    md = os.path.join(out, "scaling.md")
    with open(md + ".tmp", "w") as f:
        f.write(table(by_exp))
    os.replace(md + ".tmp", md)
    png = a.plot or os.path.join(out, "scaling.png")
    plot(by_exp, png)
    print(f"wrote {md} and {png}")


if __name__ == "__main__":
    main()
