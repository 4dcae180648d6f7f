#!/usr/bin/python3
"""Checks of scripts/analysis/plot_results.py that need no simulation (issue #25, item 6):

- the step-breakdown legend does not cover the bars (it used to sit inside the axes, over the stacked bar,
  which spans the whole width because it sums to the step time);
- a results file with a component kind that has no components (a cluster without storage targets) plots the
  other kinds without a matplotlib warning, and says on one line that the empty kind was not plotted.

Usage: plot_results_layout_test.py SOURCE_DIR
"""
import os
import subprocess
import sys
import tempfile
import warnings

import h5py
import numpy as np


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def check_legend(plot_results):
    summary = {
        "step_seconds": np.float64(2.0),
        "compute_seconds": np.float64(1.2),
        "pipeline_bubble_seconds": np.float64(0.3),
        "exposed_communication_seconds": np.float64(0.5),
        "mfu": np.float64(0.4),
        "tflops_per_gpu": np.float64(400.0),
    }
    fig = plot_results.step_breakdown_figure(summary)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    legend = ax.get_legend().get_window_extent(renderer)
    bars = [p.get_window_extent(renderer) for p in ax.patches]
    if not bars:
        fail("step breakdown has no bars")
    for bar in bars:
        if legend.overlaps(bar):
            fail(f"step-breakdown legend {legend} covers a bar {bar}")
    print("ok the step-breakdown legend covers no bar")


def check_empty_kind(source_dir):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "r.h5")
        with h5py.File(path, "w") as f:
            series = f.create_group("series")
            series.attrs["interval_ps"] = 1_000_000
            series["time"] = np.arange(8, dtype=np.uint64) * 1_000_000
            series.create_group("gpu")["busy"] = np.random.default_rng(1).random((4, 8))
            series["gpu/busy"].attrs["unit"] = "fraction"
            series.create_group("storage")["queue_depth_max"] = np.zeros((0, 8))
        env = dict(os.environ, PYTHONWARNINGS="always")
        result = subprocess.run(
            [sys.executable, os.path.join(source_dir, "scripts/analysis/plot_results.py"), path,
             os.path.join(tmp, "plots"), "--metric", "gpu/busy", "--metric", "storage/queue_depth_max"],
            capture_output=True, text=True, env=env)
        if result.returncode != 0:
            fail(f"plot_results.py exited {result.returncode}: {result.stderr}")
        lines = [l for l in result.stderr.splitlines() if l.strip()]
        if any("Warning" in l for l in lines):
            fail(f"plot_results.py warned: {result.stderr}")
        if lines != ["plot_results: storage/queue_depth_max: no components or samples, not plotted"]:
            fail(f"expected one line about the empty kind, got: {lines}")
        if not os.path.exists(os.path.join(tmp, "plots", "heatmap_gpu_busy.png")):
            fail("the non-empty kind was not plotted")
    print("ok an empty component kind is skipped with one line and no matplotlib warning")


def main():
    source_dir = sys.argv[1]
    sys.path.insert(0, os.path.join(source_dir, "scripts", "analysis"))
    warnings.simplefilter("error")  # any warning while building the figure fails the test
    import plot_results  # noqa: E402
    check_legend(plot_results)
    warnings.resetwarnings()
    check_empty_kind(source_dir)


if __name__ == "__main__":
    main()
