#!/usr/bin/env bash
# Quick start, step 1: install the Debian packages, build, and run the shipped default experiment.
# Until the cluster and training models land, the default experiment is the PHOLD benchmark
# (examples/default-phold.args) on 2 MPI ranks.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
mapfile -t args < <(grep -v '^#' examples/default-phold.args | tr ' ' '\n' | sed '/^$/d')
echo "quickstart: mpiexec -np 2 build/warpsim ${args[*]}"
mpiexec --oversubscribe --allow-run-as-root -np 2 build/warpsim "${args[@]}"
