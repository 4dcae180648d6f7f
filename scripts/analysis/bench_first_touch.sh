#!/usr/bin/env bash
# Cost of faulting fresh memory in (huge pages, MADV_POPULATE_WRITE): what the series grid's page zeroing
# costs per MB on this machine. Usage: scripts/analysis/bench_first_touch.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
g++ -O2 -std=c++20 -o "$tmp/first_touch" "$here/first_touch.cpp"
"$tmp/first_touch"
