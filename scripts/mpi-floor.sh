#!/usr/bin/env bash
# Peak RSS of an empty MPI program (MPI_Init, MPI_Barrier, MPI_Finalize) per rank: the memory floor below
# which no MPI process of any simulator can go on this machine (docs/scale.md, "Memory per rank").
# Usage: scripts/mpi-floor.sh [RANKS]   (default 4; prints one "rank maxrss_kib N" line per rank)
set -euo pipefail
ranks=${1:-4}
[[ $ranks =~ ^[1-9][0-9]*$ ]] || { echo "mpi-floor.sh: RANKS must be a positive integer (got '$ranks')" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/hello.c" <<'C'
#include <mpi.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
C
mpicc -O2 "$dir/hello.c" -o "$dir/hello"
mpiexec --oversubscribe --allow-run-as-root -np "$ranks" /usr/bin/time -f "rank maxrss_kib %M" "$dir/hello"
