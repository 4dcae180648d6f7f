# `warpsim cost` on the shipped economics examples (issue #25 item 2): each prices without an error. The
# 1,024-GPU example leaves reliability.checkpoint_seconds to the simulation (`warpsim run` measures it), so
# `cost` takes the stall from a saved run's `checkpoint seconds` (--summary) or, without one, estimates it
# from the storage bandwidth (docs/energy-cost.md); the spec's field, when set, still wins.
source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/warpsim-cost-examples.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
for spec in "$ROOT"/examples/economics/*.textproto; do
  out=$("$WARPSIM" cost "$spec" 2>&1) || fail "cost $spec: $out"
  grep -q '^goodput: ' <<<"$out" || fail "cost $spec printed no goodput: $out"
  echo "ok cost $(basename "$spec"): $(grep '^checkpoint seconds source: ' <<<"$out")"
done
SPEC=$ROOT/examples/economics/default-1024xh100.textproto
out=$("$WARPSIM" cost "$SPEC")
[[ $(value "checkpoint seconds source" "$out") == "storage bandwidth estimate" ]] || fail "source: $out"
# 6.7e9 parameters x 14 bytes at 16 x 200 Gbit/s: about 0.23 s.
awk -v c="$(value "checkpoint seconds" "$out")" 'BEGIN { exit !(c > 0.2 && c < 0.26) }' ||
  fail "estimated checkpoint seconds $(value "checkpoint seconds" "$out"), expected about 0.23"
# A saved run's simulated stall is taken over the estimate.
printf 'gpus: 1024\nstep seconds: 0.367590\ncompute seconds: 0.048\nnetwork bytes per gpu per step: 1e9\ncheckpoint seconds: 0.215440\n' >"$TMP/run.txt"
out=$("$WARPSIM" cost "$SPEC" --summary "$TMP/run.txt")
[[ $(value "checkpoint seconds source" "$out") == summary && $(value "checkpoint seconds" "$out") == 0.215440 ]] ||
  fail "--summary checkpoint seconds not used: $out"
echo "ok the 1024-GPU example: estimate, then the saved run's stall"
# The spec's field still wins.
sed 's/^  restart_seconds: 600/  checkpoint_seconds: 1.5\n  restart_seconds: 600/' "$SPEC" >"$TMP/given.textproto"
out=$("$WARPSIM" cost "$TMP/given.textproto" --summary "$TMP/run.txt")
[[ $(value "checkpoint seconds source" "$out") == spec ]] || fail "spec field lost: $out"
echo "ok reliability.checkpoint_seconds wins"
