# Helpers for the live Slurm tests: submit through `warpsim submit`, wait with a bounded timeout, and on
# failure print what explains it (job records, job output, daemon logs).
set -euo pipefail
WARPSIM=${1:?usage: $0 path/to/warpsim SLURM_STATE_DIR}
SLURM_STATE=${2:?usage: $0 path/to/warpsim SLURM_STATE_DIR}
: "${SLURM_CONF:?SLURM_CONF must name the slurm.conf of the test cluster (CTest sets it)}"
WAIT_SECONDS=${WARPSIM_SLURM_WAIT:-120}
# The jobs inherit this (sbatch exports the environment): a 2-rank job must simulate on 2 ranks even while
# other tests keep this machine's CPUs busy (docs/running.md, "Shared nodes").
export WARPSIM_SHARED_NODE=keep
work=$(mktemp -d "${TMPDIR:-/tmp}/warpsim-slurm-test.XXXXXX")
out=$work/out

diagnostics() {
  echo "==== diagnostics (work dir $work kept) ====" >&2
  local f
  echo "---- scontrol show job (all jobs of the private test cluster) ----" >&2
  scontrol show job >&2 || true
  for f in "$out"/*.out; do
    [[ -f $f ]] || continue
    echo "---- $f ----" >&2
    tail -n 30 "$f" >&2
  done
  for f in slurmctld slurmd; do
    echo "---- tail $SLURM_STATE/$f.log ----" >&2
    tail -n 30 "$SLURM_STATE/$f.log" >&2 || true
  done
}

fail() {
  echo "FAIL: $*" >&2
  diagnostics
  exit 1
}
# The work dir (job outputs, rendered scripts) is kept when a test fails.
trap 'rc=$?; if ((rc == 0)); then rm -rf "$work"; fi' EXIT

# submit [warpsim submit options] -- command... : prints the job id
submit() {
  local id
  id=$("$WARPSIM" --log-level warn submit --output-dir "$out" "$@") || fail "warpsim submit $* failed"
  [[ $id =~ ^[0-9]+$ ]] || fail "warpsim submit printed '$id', not a job id"
  echo "$id"
}

# wait_completed ID : every record of the job COMPLETED with exit 0:0 within the bounded wait
wait_completed() {
  local report
  report=$("$WARPSIM" status --wait "$WAIT_SECONDS" --poll 0.5 "$1") ||
    fail "job $1 did not end COMPLETED with exit 0:0 (waited at most ${WAIT_SECONDS} s): $report"
  echo "$report"
}

# Local run of the same warpsim command line, for reference.
run_local() { "$WARPSIM" --log-level warn "$@"; }

# value KEY REPORT
value() { printf '%s\n' "$2" | sed -n "s/^$1: //p"; }

output_of() { # output_of ID -> contents of the (single) output file
  local f=$out/warpsim-$1.out
  [[ -f $f ]] || fail "no output file $f"
  cat "$f"
}
