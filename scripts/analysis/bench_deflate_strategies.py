#!/usr/bin/env python3
"""Deflate strategies on a results file's series chunks (docs/benchmarks.md, "Per-rank layout").

Reads every /series/<kind>/<metric> dataset of FILE, cuts it into the chunks it is stored in (edge chunks
zero-padded, as the writer pads them) and compresses them with zlib at several levels and strategies, best of
three: compressed bytes, ratio, seconds and MB/s of raw doubles per core. Usage: bench_deflate_strategies.py FILE
"""
import sys
import time
import zlib

import h5py
import numpy as np

CASES = [("level 1 (the writer's)", 1, zlib.Z_DEFAULT_STRATEGY), ("level 1, Z_RLE", 1, zlib.Z_RLE),
         ("level 1, Z_HUFFMAN_ONLY", 1, zlib.Z_HUFFMAN_ONLY), ("level 1, Z_FILTERED", 1, zlib.Z_FILTERED),
         ("level 2", 2, zlib.Z_DEFAULT_STRATEGY)]


def chunks_of(path):
    out = []
    with h5py.File(path, "r") as f:
        for kind, group in f["series"].items():
            if not isinstance(group, h5py.Group):
                continue
            for ds in group.values():
                data = ds[()]
                rows = ds.chunks[0] if ds.chunks else max(1, data.shape[0])
                for r in range(0, data.shape[0], rows):
                    chunk = np.zeros((rows, data.shape[1]))
                    part = data[r:r + rows]
                    chunk[:part.shape[0]] = part
                    out.append(chunk.tobytes())
    return out


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    chunks = chunks_of(sys.argv[1])
    raw = sum(len(c) for c in chunks)
    print(f"{len(chunks)} chunks, {raw / 1e6:.2f} MB of doubles")
    for name, level, strategy in CASES:
        best, size = float("inf"), 0
        for _ in range(3):
            start, size = time.perf_counter(), 0
            for c in chunks:
                z = zlib.compressobj(level, zlib.DEFLATED, 15, 8, strategy)
                size += len(z.compress(c) + z.flush())
            best = min(best, time.perf_counter() - start)
        print(f"{name:24s} {size / 1e6:7.2f} MB  ratio {raw / size:5.2f}  {best:.3f} s  {raw / best / 1e6:5.0f} MB/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
