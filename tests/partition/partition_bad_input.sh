#!/usr/bin/env bash
# Bad partition input exits 2 with one error line naming the flag, field or map file line: ranks < 1, more
# ranks than LPs, unknown strategies, map files with missing, duplicate or out-of-range LPs or ranks.
set -euo pipefail
WARPSIM=$1
SPEC=$2
MPIEXEC=${WARPSIM_MPIEXEC:-mpiexec --oversubscribe --allow-run-as-root}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
source "$(dirname "$0")/../jobs/cli/expect_exit2.sh"
expect_exit2 ranks_zero "--ranks must be >= 1" "$WARPSIM" partition "$SPEC" --ranks 0
expect_exit2 ranks_negative "--ranks must be >= 1" "$WARPSIM" partition "$SPEC" --ranks -3
expect_exit2 too_many_ranks "more ranks (47) than LPs (46)" "$WARPSIM" partition "$SPEC" --ranks 47 --strategy block
expect_exit2 too_many_units "more ranks (20) than node units" "$WARPSIM" partition "$SPEC" --ranks 20 --strategy metis
expect_exit2 unknown_strategy "--strategy: unknown strategy 'greedy'" "$WARPSIM" partition "$SPEC" --ranks 2 --strategy greedy
expect_exit2 unknown_granularity "--granularity: unknown 'rack'" "$WARPSIM" partition "$SPEC" --ranks 2 --granularity rack
expect_exit2 run_unknown_strategy "--partition: unknown strategy 'greedy'" "$WARPSIM" run "$SPEC" --partition greedy
sed -e 's/simulation { steps: 2 }/simulation { steps: 2 partition: "greedy" }/' "$SPEC" >"$TMP/bad-spec.textproto"
expect_exit2 spec_unknown_strategy "simulation.partition: unknown strategy 'greedy'" "$WARPSIM" run "$TMP/bad-spec.textproto"
expect_exit2 phold_graph_strategy "for warpsim run, topology" "$WARPSIM" phold --partition metis

map() {  # map NAME BODY: a 2-rank map file for the 46 LPs of the small spec
  printf '# test map\nlps 46\nranks 2\n%b' "$2" >"$TMP/$1.map"
  echo "$TMP/$1.map"
}
run2() { $MPIEXEC -np 2 "$WARPSIM" run "$SPEC" --sync optimistic --progress-seconds 0 "$@"; }
expect_exit2 map_missing "--partition-map: map file $TMP/missing.map: LP 20 is not mapped" \
  run2 --partition-map "$(map missing '0 19 0\n21 45 1\n')"
expect_exit2 map_duplicate "line 5: LP 20 listed twice (also line 4)" run2 --partition-map "$(map duplicate '0 20 0\n20 45 1\n')"
expect_exit2 map_lp_range "line 5: LP 46 out of range (lps 46)" run2 --partition-map "$(map lp_range '0 20 0\n21 46 1\n')"
expect_exit2 map_rank_range "line 5: rank 2 out of range (ranks 2)" run2 --partition-map "$(map rank_range '0 20 0\n21 45 2\n')"
expect_exit2 map_malformed "line 4: expected 'FIRST LAST RANK' or 'LP RANK'" run2 --partition-map "$(map malformed '0 - 20 0\n')"
expect_exit2 map_wrong_ranks "written for 2 ranks, the run has 1" \
  "$WARPSIM" run "$SPEC" --partition-map "$(map ranks '0 20 0\n21 45 1\n')"
expect_exit2 map_no_file "cannot open" "$WARPSIM" run "$SPEC" --partition-map "$TMP/nope.map"
expect_exit2 map_and_strategy "excludes" "$WARPSIM" run "$SPEC" --partition topology --partition-map "$(map ok '0 45 0\n')"
