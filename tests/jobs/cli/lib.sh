# Helpers for the CLI tests: run warpsim under mpiexec and read keys from its `key: value` report.
# WARPSIM_MPIEXEC is set by CTest (mpiexec plus the flags this machine needs).
set -euo pipefail
WARPSIM=${1:?usage: $0 path/to/warpsim}
MPIEXEC=${WARPSIM_MPIEXEC:-mpiexec --oversubscribe}

# run_np N args... : prints the report
run_np() {
  local np=$1
  shift
  $MPIEXEC -np "$np" "$WARPSIM" --log-level warn "$@"
}

# value KEY REPORT
value() { printf '%s\n' "$2" | sed -n "s/^$1: //p"; }

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
