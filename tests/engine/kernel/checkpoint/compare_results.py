#!/usr/bin/python3
"""Checks that two warpsim results files hold the same simulated results: every dataset under /series,
/components and /summary (values bit for bit, shapes, dtypes and attributes) and the /meta attributes,
except the run-cost ones (wall time, event rate, peak RSS) and those that depend on optimistic execution
(events processed/rolled back, rollbacks, efficiency).

Usage: compare_results.py A.h5 B.h5
"""
import sys

import h5py
import numpy as np

VOLATILE_META = {"wall_seconds", "event_rate", "peak_rss_bytes", "peak_rss_bytes_total", "cpu_share_min", "events_processed",
                 "events_rolled_back", "rollbacks", "efficiency",
                 # named after the file (the per-rank layout's rank directory), not a result
                 "rank_directory"}


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind == "f":
        return np.array_equal(a, b, equal_nan=True)
    return np.array_equal(a, b)


def datasets(group, prefix=""):
    out = {}
    for name, item in group.items():
        path = f"{prefix}/{name}"
        if isinstance(item, h5py.Group):
            out.update(datasets(item, path))
        else:
            out[path] = item
    return out


def main():
    a_path, b_path = sys.argv[1], sys.argv[2]
    problems = []
    with h5py.File(a_path, "r") as a, h5py.File(b_path, "r") as b:
        for top in ("series", "components", "summary"):
            if (top in a) != (top in b):
                problems.append(f"/{top} present in one file only")
                continue
            if top not in a:
                continue
            da, db = datasets(a[top], "/" + top), datasets(b[top], "/" + top)
            for path in sorted(set(da) | set(db)):
                if path not in da or path not in db:
                    problems.append(f"{path} present in one file only")
                    continue
                if not same(da[path][()], db[path][()]):
                    problems.append(f"{path} values differ")
                attrs_a, attrs_b = dict(da[path].attrs), dict(db[path].attrs)
                for key in sorted(set(attrs_a) | set(attrs_b)):
                    if key not in attrs_a or key not in attrs_b or not same(attrs_a[key], attrs_b[key]):
                        problems.append(f"{path} attribute {key} differs")
        ma = {k: v for k, v in a["meta"].attrs.items() if k not in VOLATILE_META}
        mb = {k: v for k, v in b["meta"].attrs.items() if k not in VOLATILE_META}
        for key in sorted(set(ma) | set(mb)):
            if key not in ma or key not in mb or not same(ma[key], mb[key]):
                problems.append(f"/meta attribute {key} differs")
        compared = len(datasets(a["series"])) if "series" in a else 0
    if problems:
        print(f"FAIL: {a_path} and {b_path} differ:\n  " + "\n  ".join(problems))
        return 1
    print(f"ok: {a_path} == {b_path} ({compared} series datasets)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
