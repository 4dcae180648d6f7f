#!/usr/bin/env bash
# --memory-budget (docs/running.md, "Memory budget"): a run predicted not to fit is refused before simulating
# with one line naming the flag and exit 2; a bad value likewise; a run within it reports the budget and
# whether its peak stayed under it; an optimistic 2-rank run under a budget (which sets each rank's
# uncommitted-event limit) commits the same events with the same state digest as the sequential run; a flow
# run on several ranks is warned about.
# Args: path/to/warpsim small_spec. Env: WARPSIM_MPIEXEC.
source "$(dirname "$0")/../../jobs/cli/lib.sh"
SPEC=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

expect_refusal() {  # expect_refusal PATTERN ARGS...
  local pattern=$1 code=0 err
  shift
  err=$("$WARPSIM" run "$SPEC" "$@" 2>&1 >/dev/null) || code=$?
  [[ $code -eq 2 && $(wc -l <<<"$err") -eq 1 ]] || fail "$*: exit $code, expected 2 and one line: $err"
  grep -q -- "$pattern" <<<"$err" || fail "$*: '$pattern' not in: $err"
  echo "ok refused ($*): $err"
}
expect_refusal "^warpsim: error: --memory-budget 20MiB: this run is predicted to need .* MiB per rank on 1 rank(s).*no rank count fits" \
  --check --memory-budget 20MiB
expect_refusal "^warpsim: error: --memory-budget 20MiB: this run is predicted" --sync sequential --memory-budget 20MiB
expect_refusal "^warpsim: error: --memory-budget: unknown unit 'QB'" --memory-budget 12QB
expect_refusal "^warpsim: error: --memory-budget must be > 0" --memory-budget 0
expect_refusal "^warpsim: error: --memory-budget: expected a byte count" --memory-budget lots

# Within the budget: the keys, and the peak under it.
seq=$(run_np 1 run "$SPEC" --sync sequential --progress-seconds 0 --memory-budget 4GiB)
[[ $(value "memory budget bytes per rank" "$seq") == 4294967296 ]] || fail "no budget key: $seq"
[[ $(value "memory budget met" "$seq") == yes ]] || fail "a small run did not fit 4 GiB: $seq"
[[ -n $(value "memory budget limit cuts" "$seq") ]] || fail "no cuts key: $seq"
echo "ok sequential within 4 GiB: peak $(value "peak rss bytes" "$seq") B"

# Optimistic on 2 ranks under a budget just above the prediction (which ignores the event pool and MPI's
# buffers, so a rank is usually over it once it runs: its limit starts at or near the smallest, 256 events,
# and is cut): the same events and digest as sequential; a peak over the budget is reported and warned about.
out=$(run_np 2 run "$SPEC" --sync optimistic --shared-node keep --progress-seconds 0 --memory-budget 27MiB \
  --gvt-interval 64 2>"$tmp/err")
[[ $(value "events committed" "$out") == "$(value "events committed" "$seq")" ]] ||
  fail "committed $(value "events committed" "$out") against $(value "events committed" "$seq") sequential"
[[ $(value "state digest" "$out") == "$(value "state digest" "$seq")" ]] || fail "digest differs: $out"
met=$(value "memory budget met" "$out")
peak=$(value "peak rss bytes" "$out")
if ((peak > 27 * 1048576)); then
  [[ $met == no ]] || fail "peak $peak B over 27 MiB reported as met: $out"
  grep -q "above the memory budget of 27.0 MiB per rank" "$tmp/err" || fail "no warning: $(cat "$tmp/err")"
else
  [[ $met == yes ]] || fail "peak $peak B under 27 MiB reported as not met: $out"
fi
echo "ok 2 ranks under a budget: digest $(value "state digest" "$out"), peak $peak B, met $met," \
  "$(value "memory budget limit cuts" "$out") limit cuts, $(value "events rolled back" "$out") rolled back"

# A flow-fidelity run on several ranks is warned about before it starts.
sed 's/network { packet_bytes: 1048576 }/network { fidelity: "flow" packet_bytes: 1048576 }/' "$SPEC" >"$tmp/flow.textproto"
cmp -s "$SPEC" "$tmp/flow.textproto" && fail "rewrite to flow fidelity did not apply"
err=$($MPIEXEC -np 2 "$WARPSIM" run "$tmp/flow.textproto" --check 2>&1 >/dev/null)
grep -q "warning: flow fidelity on 2 ranks: one LP holds every flow" <<<"$err" || fail "no flow warning: $err"
echo "ok flow on 2 ranks warned"
