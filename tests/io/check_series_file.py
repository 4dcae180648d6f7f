#!/usr/bin/python3
"""Reader test for a PHOLD results file: shapes, units, attributes, and that the per-sample series add up
to the engine's committed-event total (passed on the command line from the run's report).

Usage: check_series_file.py FILE.h5 EVENTS_COMMITTED LP_COUNT SAMPLES
"""
import json
import sys

import h5py
import numpy as np


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def main():
    path, committed, lps, samples = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    with h5py.File(path, "r") as f:
        time = f["series/time"]
        assert time.shape == (samples,), time.shape
        assert text(time.attrs["unit"]) == "ps"
        interval = int(f["series"].attrs["interval_ps"])
        assert np.array_equal(time[()], np.arange(samples, dtype=np.uint64) * interval)

        events = f["series/phold_lp/events"]
        remote = f["series/phold_lp/remote_events"]
        for ds in (events, remote):
            assert ds.shape == (lps, samples), (ds.name, ds.shape)
            assert ds.dtype == np.float64
            assert text(ds.attrs["unit"]) == "events", ds.attrs["unit"]
            assert text(ds.attrs["aggregation"]) == "sum"
            assert text(ds.attrs["component_ids"]) == "/components/phold_lp/id"
        e, r = events[()], remote[()]
        # The series is fed only by commit handlers: its total is exactly the engine's committed count.
        assert e.sum() == committed, (e.sum(), committed)
        assert (e >= 0).all() and (r >= 0).all() and (r <= e).all()
        assert (e == np.round(e)).all()
        assert r.sum() > 0, "no remote events recorded"

        ids = f["components/phold_lp/id"][()]
        assert np.array_equal(ids, np.arange(lps, dtype=np.uint64))
        names = [text(n) for n in f["components/phold_lp/name"][()]]
        assert names[:3] == ["lp0", "lp1", "lp2"] and len(names) == lps, names[:3]

        summary = f["summary"]
        assert float(summary["events_committed"][()]) == committed
        assert float(summary["lp_count"][()]) == lps
        assert text(summary["events_committed"].attrs["unit"]) == "events"

        meta = f["meta"].attrs
        spec = json.loads(text(meta["spec"]))
        assert spec["model"] == "phold" and spec["lp_count"] == lps, spec
        for key in ("warpsim_version", "git_revision", "sync", "partition", "ranks", "seed"):
            assert key in meta, key
    print(f"ok {path}: [{lps}, {samples}] series, {committed} events == engine total, units and ids checked")


if __name__ == "__main__":
    main()
