#!/usr/bin/env bash
# Self-test of scripts/check-layers.sh: on a small fake tree it must pass when clean, and fail (exit 1, naming
# file:line and the rule) for each kind of forbidden include and link. Also checks that the rule list in the
# script's header comment is the list it enforces (docs quote the comment). Usage: check_layers_selftest.sh
# [path/to/check-layers.sh]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
check=${1:-$here/../../scripts/check-layers.sh}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# The base tree: one clean file per layer, including every allowed kind of include.
base=$tmp/base
put() { mkdir -p "$(dirname "$base/$1")"; printf '%s\n' "${@:2}" >"$base/$1"; }
put engine/lp_type.hpp '#pragma once' '#include <cstdint>' '#include "engine/sim_time.hpp"'
put engine/sim_time.hpp '#pragma once'
put engine/kernel/engine.hpp '#pragma once' '#include <mpi.h>' '#include "engine/lp_type.hpp"'
put models/phold/phold.hpp '#pragma once' '#include "engine/lp_type.hpp"' '#include "phold_local.hpp"'
put models/phold/phold_local.hpp '#pragma once'
put models/cluster/cluster_params.hpp '#pragma once'
put models/cluster/topology.hpp '#pragma once'
put partition/map.hpp '#pragma once' '#include "engine/kernel/engine.hpp"'
put io/writer.cpp '#include <mpi.h>' '#include "engine/lp_type.hpp"' '#include "engine/kernel/engine.hpp"'
put experiment/run.cpp '#include "models/phold/phold.hpp"' '#include "partition/map.hpp"'
put experiment/spec/cluster_spec.cpp '#include "models/cluster/cluster_params.hpp"' '#include "engine/lp_type.hpp"'
put jobs/cli/main.cpp '#include "experiment/run.cpp"' '#include "jobs/cli/options.hpp"'
put jobs/cli/options.hpp '#pragma once'
put tests/jobs/options_test.cpp '#include "jobs/cli/options.hpp"'
put models/workload/trace.proto 'syntax = "proto3";' 'import "models/workload/other.proto";'

# The CMake project of the fake tree: the real graph, from a project with no languages (configures fast).
cat >"$base/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(fake LANGUAGES NONE)
add_library(MPI::MPI_C INTERFACE IMPORTED)
add_library(warpsim_model_api INTERFACE)
add_library(warpsim_engine INTERFACE)
target_link_libraries(warpsim_engine INTERFACE warpsim_model_api MPI::MPI_C)
add_library(warpsim_cluster INTERFACE)
target_link_libraries(warpsim_cluster INTERFACE warpsim_model_api)
add_library(warpsim_energy INTERFACE)
target_link_libraries(warpsim_energy INTERFACE
  warpsim_cluster)
add_library(warpsim_partition INTERFACE)
target_link_libraries(warpsim_partition INTERFACE warpsim_engine)
CMAKE

# check NAME WANT_EXIT PATTERN...: configure the tree, run the check on it, compare exit and output.
check_tree() {
  local name=$1 want=$2 tree=$tmp/$1 out rc=0 p before=$failures
  shift 2
  cmake -S "$tree" -B "$tree/build" >/dev/null
  out=$("$check" --root "$tree" --build-dir "$tree/build" 2>&1) || rc=$?
  [[ $rc == "$want" ]] || fail "$name: exit $rc, want $want"
  for p in "$@"; do
    grep -qF -- "$p" <<<"$out" || fail "$name: output lacks '$p'"
  done
  if ((failures > before)); then printf '%s output:\n%s\n' "$name" "$out"; fi
}
add() { mkdir -p "$(dirname "$bad/$1")"; printf '%s\n' "${@:2}" >>"$bad/$1"; }

cp -r "$base" "$tmp/clean"
check_tree clean 0 "layers: ok (9 rules, 15 files)"

# One tree with one violation of each kind (each line below is expected in the output, and no other).
bad=$tmp/bad
cp -r "$base" "$bad"
add models/phold/bad.cpp '// kernel' '#include "engine/kernel/engine.hpp"' '#include <mpi.h>'
add models/phold/deep/bad.cpp '#include "../../../partition/map.hpp"'
add models/workload/trace.proto 'import "jobs/spec/job.proto";'
add engine/model.hpp '#include "engine/kernel/engine.hpp"' '#include "mpi.h"'
add engine/kernel/gvt.cpp '#include "models/phold/phold.hpp"' '#include "io/writer.hpp"'
add io/writer.cpp '#include "models/cluster/topology.hpp"'
add partition/map.hpp '#include "experiment/run.hpp"'
add experiment/run.cpp '#include "jobs/cli/options.hpp"'
add experiment/spec/cluster_spec.cpp '#include "models/cluster/topology.hpp"' '#include "io/logging.hpp"'
add slurm/sbatch.cpp '#include "jobs/cli/options.hpp"'
add CMakeLists.txt 'target_link_libraries(warpsim_cluster INTERFACE warpsim_partition)' \
  'target_link_libraries(warpsim_model_api INTERFACE /usr/lib/openmpi/lib/libmpi.so)'
check_tree bad 1 \
  'models/phold/bad.cpp:2: R1: includes "engine/kernel/engine.hpp"' \
  'models/phold/bad.cpp:3: R1: includes <mpi.h>' \
  'models/phold/deep/bad.cpp:1: R1: includes "../../../partition/map.hpp"' \
  'models/workload/trace.proto:3: R1: includes "jobs/spec/job.proto"' \
  'models/workload/trace.proto:3: R7:' \
  'engine/model.hpp:1: R2:' 'engine/model.hpp:2: R2: includes "mpi.h"' \
  'engine/kernel/gvt.cpp:1: R3:' 'engine/kernel/gvt.cpp:2: R3:' \
  'io/writer.cpp:4: R4:' 'partition/map.hpp:3: R4:' \
  'experiment/run.cpp:3: R5:' 'experiment/run.cpp:3: R7:' \
  'experiment/spec/cluster_spec.cpp:3: R6:' 'experiment/spec/cluster_spec.cpp:4: R6:' \
  'slurm/sbatch.cpp:1: R7:' \
  'CMakeLists.txt:14: L1: links warpsim_cluster -> warpsim_partition' \
  'CMakeLists.txt:14: L1: links warpsim_cluster -> warpsim_partition -> warpsim_engine' \
  'CMakeLists.txt:8: L1: links warpsim_cluster -> warpsim_model_api -> /usr/lib/openmpi/lib/libmpi.so' \
  'CMakeLists.txt:10: L1: links warpsim_energy -> warpsim_cluster -> warpsim_partition' \
  'CMakeLists.txt:15: L2: links warpsim_model_api -> /usr/lib/openmpi/lib/libmpi.so' \
  '  R1 models/**' '  R7 nothing outside' '  L1 the model libraries' '  L2 warpsim_model_api' \
  'layers: FAILED, 23 violation(s) of 9 rules in 20 files'

# A build folder that is not configured is a set-up error, not a pass.
rc=0
"$check" --root "$base" --build-dir "$tmp/nowhere" >/dev/null 2>&1 || rc=$?
[[ $rc == 2 ]] || fail "unconfigured build folder: exit $rc, want 2"

# The header comment lists exactly the rules the script enforces.
diff <(sed -n 's/^# \([RL][0-9]\+ \)/\1/p' "$check") <("$check" --list) >/dev/null ||
  fail "rule comment block and --list differ: $(diff <(sed -n 's/^# \([RL][0-9]\+ \)/\1/p' "$check") <("$check" --list))"

if ((failures)); then
  echo "check_layers_selftest: $failures failure(s)"
  exit 1
fi
echo "check_layers_selftest: ok"
