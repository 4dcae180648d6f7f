# Bad sweep specs and flags: exit code 2 and one error line naming the path or flag.
set -euo pipefail
WARPSIM=${1:?usage: $0 path/to/warpsim}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/warpsim-sweep-bad.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
# expect_error WANT ARGS... : exit 2, exactly one stderr line, containing WANT
expect_error() {
  local want=$1 rc=0 err
  shift
  err=$("$WARPSIM" "$@" 2>&1 >/dev/null) || rc=$?
  if ((rc != 2)) || [[ $err != *"$want"* ]] || (($(wc -l <<<"$err") != 1)); then
    echo "FAIL: warpsim $*: exit $rc, stderr: $err (wanted exit 2 and '$want')" >&2
    failures=$((failures + 1))
  else
    echo "ok: $err"
  fi
}
sweep() { # sweep NAME BODY: a sweep file over the 64-GPU test experiment
  printf 'base_file: "%s"\n%s\n' "$here/small64.textproto" "$2" >"$work/$1.textproto"
  echo "$work/$1.textproto"
}
expect_error "job.parallelism.tp: unknown field 'tp'" sweep "$(sweep unknown 'axes { path: "job.parallelism.tp" values: ["4"] }')" --list
expect_error "simulation.seed: axis has no values" sweep "$(sweep empty 'axes { path: "simulation.seed" }')" --list
expect_error "cluster.nodes: value 'many' is not an unsigned 32-bit integer" \
  sweep "$(sweep type 'axes { path: "cluster.nodes" values: ["8", "many"] }')" --list
expect_error "simulation.steps: zipped with simulation.seed but has 1 values, not 2" \
  sweep "$(sweep zip 'zip { axes { path: "simulation.seed" values: ["1", "2"] } axes { path: "simulation.steps" values: ["1"] } }')" --list
expect_error "cluster.fat_tree.links.7.bandwidth_gbps: index 7 is out of range" \
  sweep "$(sweep index 'axes { path: "cluster.fat_tree.links.7.bandwidth_gbps" values: ["1"] }')" --list
expect_error "experiment 1 (job.parallelism.data_parallel=64)" \
  sweep "$(sweep invalid 'axes { path: "job.parallelism.data_parallel" values: ["4", "64"] }')" --out "$work/o"
printf 'axes { path: "simulation.seed" values: ["1"] }\n' >"$work/nobase.textproto"
expect_error "base: required" sweep "$work/nobase.textproto" --list
printf 'base_file: "missing.textproto"\n' >"$work/missing.textproto"
expect_error "base_file: " sweep "$work/missing.textproto" --list
printf 'axes { pth: "x" }\n' >"$work/syntax.textproto"
expect_error "sweep spec $work/syntax.textproto: line 1" sweep "$work/syntax.textproto" --list
expect_error "--jobs must be in [1, 1024]" sweep "$here/small64-sweep.textproto" --out "$work/o" --jobs 0
expect_error "--out is required" sweep "$here/small64-sweep.textproto"
expect_error "holds no sweep" sweep --out "$work/none" --task 0
expect_error "--partition/--time/--account/--slurm-config/--dry-run need --slurm" \
  sweep "$here/small64-sweep.textproto" --out "$work/o" --partition debug
expect_error "--run-flag: 'sequential' is not a flag" \
  sweep "$here/small64-sweep.textproto" --out "$work/o" --run-flag sequential
[[ ! -e $work/o/index.csv ]] || { echo "FAIL: a rejected sweep wrote an index" >&2; failures=$((failures + 1)); }
((failures == 0)) || exit 1
