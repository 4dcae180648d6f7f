#!/usr/bin/env bash
# Quick start, step 2: build (if needed) and run the whole test suite: unit, MPI (1/2/4 ranks) and CLI tests.
# --quick runs the quick tier instead (ctest label `quick`: every unit test and one sequential-vs-parallel
# oracle per model, about 2 minutes on 2 cores); CI always runs everything. Other arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
args=()
for arg in "$@"; do
  if [[ $arg == --quick ]]; then args+=(-L quick); else args+=("$arg"); fi
done
bash scripts/install-deps.sh
bash scripts/build.sh
cd build
ctest --output-on-failure --timeout 900 "${args[@]}"
