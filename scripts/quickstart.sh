#!/usr/bin/env bash
# Quick start, step 1: install the Debian packages, build, and run the shipped default experiment:
# a GPT-style 6.7B model training on 1024 simulated H100 GPUs (examples/default.textproto) on 2 MPI ranks.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
echo "quickstart: mpiexec -np 2 build/warpsim run examples/default.textproto"
mpiexec --oversubscribe --allow-run-as-root -np 2 build/warpsim run examples/default.textproto
