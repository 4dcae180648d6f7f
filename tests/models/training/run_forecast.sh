#!/usr/bin/env bash
# Issue #25 item 3: `run --check` predicts the run's events, memory and wall time, and warns (stderr, exit 0)
# before a long one; an end time the compute-only estimate cannot fit is refused before simulating.
# Usage: run_forecast.sh WARPSIM SMALL_SPEC EXAMPLES_DIR
set -euo pipefail
WARPSIM=$1
SPEC=$2
EXAMPLES=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
value() { printf '%s\n' "$2" | sed -n "s/^$1: //p"; }

# The forecast of the small spec is within 2% of what the simulation commits.
check=$("$WARPSIM" run "$SPEC" --check 2>"${TMPDIR:-/tmp}/forecast_small_err.$$")
warn=$(cat "${TMPDIR:-/tmp}/forecast_small_err.$$"); rm -f "${TMPDIR:-/tmp}/forecast_small_err.$$"
predicted=$(value "predicted events" "$check")
[[ -n $predicted ]] || fail "run --check printed no 'predicted events': $check"
[[ -z $warn ]] || fail "a small run was warned about: $warn"
for key in "predicted peak rss bytes per rank" "predicted wall seconds" "reference events per second" lps; do
  [[ -n $(value "$key" "$check") ]] || fail "run --check printed no '$key'"
done
committed=$(value "events committed" "$("$WARPSIM" run "$SPEC" --sync sequential)")
awk -v p="$predicted" -v c="$committed" 'BEGIN { d = (p - c) / c; exit !(d < 0.02 && d > -0.02) }' ||
  fail "predicted $predicted events, the run committed $committed"
echo "ok forecast: predicted $predicted events, committed $committed"

# The 1T example (about 1.3e10 events) is warned about before anything runs, and --check still succeeds.
err=$("$WARPSIM" run "$EXAMPLES/megatron-1t-3072xa100.textproto" --check 2>&1 >/dev/null)
grep -q "^warpsim: warning: this run is predicted to commit 1.3[0-9]e+10 events" <<<"$err" ||
  fail "no warning before the 1T run: $err"
echo "ok warned: $err"

# An end time shorter than the compute-only estimate is one error line naming the field, exit 2.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed 's/simulation { steps: 2 }/simulation { steps: 2 end_time_s: 0.000001 }/' "$SPEC" >"$tmp/short.textproto"
cmp -s "$SPEC" "$tmp/short.textproto" && fail "rewrite did not apply"
for args in "--check" "--sync sequential"; do
  code=0
  # shellcheck disable=SC2086
  err=$("$WARPSIM" run "$tmp/short.textproto" $args 2>&1 >/dev/null) || code=$?
  [[ $code -eq 2 && $(wc -l <<<"$err") -eq 1 ]] || fail "short end time ($args): exit $code: $err"
  grep -q "simulation.end_time_s: 1e-06 s cannot complete the run" <<<"$err" || fail "short end time: $err"
done
echo "ok short end time refused: $err"
