#!/usr/bin/env bash
# Partitioning benchmark (docs/benchmarks.md, "Partitioning (issue 6)"): for each strategy and rank count,
# the predicted quality (`warpsim partition`: edge cut, imbalance) and a measured optimistic run (remote
# event fraction, rollbacks, event rate, wall seconds), plus the state digest that must not change.
# Usage: [STRATEGIES="topology metis"] [ROUNDS=1] [EXTRA_ARGS="--optimism-control fixed"] \
#          scripts/bench-partition.sh build/warpsim [SPEC] [RANKS...]
# ROUNDS > 1 repeats the whole list, the strategy order reversed in every second round (alternating pairs,
# so that a change in the machine's load does not favour one strategy); EXTRA_ARGS go to every `run`.
set -euo pipefail
WARPSIM=${1:?usage: $0 path/to/warpsim [spec] [ranks...]}
SPEC=${2:-examples/partition-16kxh100.textproto}
shift $(( $# >= 2 ? 2 : 1 ))
RANKS=("${@:-2 4}")
[[ ${#RANKS[@]} -gt 0 ]] || RANKS=(2 4)
MPIEXEC=${WARPSIM_MPIEXEC:-mpiexec --oversubscribe --allow-run-as-root}
# Partitions are compared on N ranks: keep every rank even on a busy node (docs/running.md "Shared nodes").
export WARPSIM_SHARED_NODE=${WARPSIM_SHARED_NODE:-keep}
value() { sed -n "s/^$1: //p" <<<"$2"; }
printf '%-5s %-11s %8s %9s | %8s %10s %9s %10s %9s %8s %s\n' ranks strategy "edge cut" imbalance \
  "remote" "rolled back" rollbacks "event rate" "wall s" load digest
read -r -a order <<<"${STRATEGIES:-block round-robin topology topology-striped metis}"
for ((round = 1; round <= ${ROUNDS:-1}; ++round)); do
  list=("${order[@]}")
  if ((round % 2 == 0)); then
    list=()
    for ((i = ${#order[@]} - 1; i >= 0; --i)); do list+=("${order[i]}"); done
  fi
  for np in ${RANKS[*]}; do
    for s in "${list[@]}"; do
      p=$("$WARPSIM" partition "$SPEC" --ranks "$np" --strategy "$s")
      load=$(cut -d' ' -f1 /proc/loadavg)
      # shellcheck disable=SC2086 # EXTRA_ARGS is a list of flags
      r=$(timeout 900 $MPIEXEC -np "$np" "$WARPSIM" --log-level warn run "$SPEC" --sync optimistic --partition "$s" \
        --progress-seconds 0 ${EXTRA_ARGS:-})
      printf '%-5s %-11s %8s %9s | %8s %10s %9s %10s %9s %8s %s\n' "$np" "$s" "$(value "edge cut" "$p")" \
        "$(value "load imbalance" "$p")" "$(value "remote event fraction" "$r")" \
        "$(value "events rolled back" "$r")" "$(value rollbacks "$r")" "$(value "event rate" "$r")" \
        "$(value "wall seconds" "$r")" "$load" "$(value "state digest" "$r")"
    done
  done
done
