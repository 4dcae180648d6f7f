#!/usr/bin/python3
"""Plot of a training run simulated under failures (reliability.simulate_failures, docs/energy-cost.md) from
the results file of `warpsim run --output`: the job's progress in steps over simulated time (it drops back to
the last checkpoint at each failure), the checkpointed steps, the failure-free progress for reference, and
each failure marked by its component class.

The progress table holds a row at each change of phase and two per failure (hdf5-layout.md); between rows the
job gains one step every T while working, so consecutive rows are joined by straight lines. Before plotting,
the script checks that the table's failures and its last progress reproduce the run's own `simulated
failures` and `simulated steps` (/summary), so the plot and warpsim cannot drift apart. Bad input (missing
file, dataset or key, a check that fails) exits 2 with one line.

usage: resilience_plot.py RESULTS.h5 OUT.png
"""
import sys

import h5py
import numpy as np
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

CLASSES = ["gpu", "node", "nic", "nvswitch", "switch", "storage"]


def fail(message):
    print(f"resilience_plot.py: error: {message}", file=sys.stderr)
    sys.exit(2)


def need(f, path, where):
    if path not in f:
        fail(f"{where}: no dataset {path} (run with reliability.simulate_failures and --output)")
    return f[path][()]


def main(argv):
    if len(argv) != 3:
        fail("usage: resilience_plot.py RESULTS.h5 OUT.png")
    path, out = argv[1], argv[2]
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        fail(f"cannot open results file '{path}': {e}")
    with f:
        t = need(f, "resilience/progress/time_s", path) / 3600.0
        steps = need(f, "resilience/progress/steps", path)
        saved = need(f, "resilience/progress/checkpointed_steps", path)
        phase = need(f, "resilience/progress/phase", path)
        ft = need(f, "resilience/failures/time_s", path) / 3600.0
        fclass = need(f, "resilience/failures/component", path)
        hours = float(need(f, "summary/simulated_failure_hours", path))
        failures = int(need(f, "summary/simulated_failures", path))
        final_steps = int(need(f, "summary/simulated_steps", path))
        goodput = float(need(f, "summary/simulated_goodput", path))
        analytic = float(need(f, "summary/analytic_goodput", path))
        step_s = float(need(f, "summary/step_seconds_without_checkpoints", path))
        interval = float(need(f, "summary/checkpoint_interval_steps", path))
        ckpt_s = float(need(f, "summary/checkpoint_seconds", path))
    if ft.size != failures:
        fail(f"{path}: the failure table has {ft.size} rows, the run reports {failures} failures")
    # After the last row the job either stays put (checkpointing, restarting, waiting) or works on: at the
    # horizon it has the run's final progress.
    if steps.size == 0 or final_steps < int(steps[-1]) or (int(phase[-1]) != 0 and final_steps != int(steps[-1])):
        fail(f"{path}: the progress table ends at {steps[-1] if steps.size else 'no row'} steps "
             f"(phase {phase[-1] if steps.size else '-'}), the run reports {final_steps} at the horizon")
    t = np.append(t, hours)
    steps = np.append(steps, final_steps)
    saved = np.append(saved, saved[-1])

    fig, ax = plt.subplots(figsize=(9, 4.2))
    ideal_rate = interval / (interval * step_s + ckpt_s) * 3600.0  # steps per hour without failures
    ax.plot([0, hours], [0, ideal_rate * hours], color="0.6", linestyle="--",
            label=f"no failures (goodput {interval * step_s / (interval * step_s + ckpt_s):.4f})")
    ax.plot(t, steps, color="C0", linewidth=1.2, label=f"progress (simulated goodput {goodput:.4f}; "
                                                       f"analytic {analytic:.4f})")
    ax.step(t, saved, where="post", color="C2", linewidth=0.9, label="checkpointed steps")
    top = max(ideal_rate * hours, float(steps.max()) if steps.size else 0.0)
    for k, name in enumerate(CLASSES):
        sel = fclass == k
        if sel.any():
            ax.vlines(ft[sel], 0, top * 0.04, color=f"C{3 + k}", linewidth=1.5,
                      label=f"{name} failure ({int(sel.sum())})")
    ax.set_xlim(0, hours)
    ax.set_ylim(0, top * 1.03)
    ax.set_xlabel("simulated time (hours)")
    ax.set_ylabel("training steps")
    ax.set_title(f"{failures} failures in {hours:g} simulated hours")
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"{path}: {failures} failures, {final_steps} steps, simulated goodput {goodput:.4f} "
          f"(analytic {analytic:.4f}) -> {out}")


if __name__ == "__main__":
    main(sys.argv)
