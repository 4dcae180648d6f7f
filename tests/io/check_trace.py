#!/usr/bin/python3
"""Checks a trace exported by `warpsim inspect --trace` against its HDF5 file: valid trace-event JSON, one
counter track per selected component, one point per sample, values equal to the series.

Usage: check_trace.py TRACE.json FILE.h5 FIRST_ID LAST_ID
"""
import json
import sys

import h5py


def main():
    trace_path, h5_path, first, last = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    with open(trace_path) as fp:
        trace = json.load(fp)
    events = trace["traceEvents"]
    counters = [e for e in events if e["ph"] == "C"]
    with h5py.File(h5_path, "r") as f:
        values = f["series/phold_lp/events"][()]
        times = f["series/time"][()]
    tracks = sorted({e["name"] for e in counters})
    want = sorted(f"lp{i}" for i in range(first, last + 1))
    assert tracks == want, (tracks[:5], want[:5])
    assert len(counters) == len(want) * len(times), (len(counters), len(want), len(times))
    for e in counters:
        lp = int(e["name"][2:])
        sample = int(round(e["ts"] * 1e6)) // int(times[1] - times[0])
        assert e["args"]["events"] == values[lp, sample], (e, values[lp, sample])
    assert any(e["ph"] == "M" and e["args"]["name"] == "phold_lp" for e in events)
    print(f"ok {trace_path}: {len(tracks)} counter tracks x {len(times)} samples match the series")


if __name__ == "__main__":
    main()
