#!/usr/bin/env bash
# Quick start, step 1: install the Debian packages, build, and run the shipped default experiment:
# a GPT-style 6.7B model training on 1024 simulated H100 GPUs (examples/default.textproto) on 1 rank
# (sequential). On a 2-core machine 2 optimistic ranks are slower than 1 (docs/benchmarks.md: the optimistic
# engine's per-event overhead and a shared CPU eat the second core), so the quick start runs what is fastest here;
# `mpiexec -np N build/warpsim run ...` gives the same results on any N.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
echo "quickstart: build/warpsim run examples/default.textproto"
build/warpsim run examples/default.textproto
