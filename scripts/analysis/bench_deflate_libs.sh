#!/usr/bin/env bash
# zlib against libdeflate, level by level, on the series chunks of a results file (docs/benchmarks.md,
# "libdeflate, tile fills and leaner grid blocks"): cuts every /series dataset into its stored chunks (edge
# chunks zero-padded, as the writer pads them; the same cut as bench_deflate_strategies.py), then compresses
# them all on one thread, best of three. Usage: scripts/analysis/bench_deflate_libs.sh FILE.h5
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: $0 FILE.h5" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
g++ -O2 -std=c++20 -o "$tmp/deflate_libs" "$here/deflate_libs.cpp" -lz -ldeflate
/usr/bin/python3 -c '
import sys
sys.path.insert(0, sys.argv[3])
from bench_deflate_strategies import chunks_of
chunks = chunks_of(sys.argv[1])
with open(sys.argv[2] + "/chunks.bin", "wb") as out:
    for c in chunks:
        out.write(c)
with open(sys.argv[2] + "/lengths.txt", "w") as out:
    out.write(" ".join(str(len(c)) for c in chunks))
' "$1" "$tmp" "$here"
"$tmp/deflate_libs" "$tmp/chunks.bin" "$tmp/lengths.txt"
