#!/usr/bin/env bash
# Quick start, step 2: build (if needed) and run the whole test suite: unit, MPI (1/2/4 ranks) and CLI tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
cd build
ctest --output-on-failure --timeout 900 "$@"
