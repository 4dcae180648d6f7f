# `warpsim run --output` bad input: an existing file without --overwrite, an unwritable path, a directory,
# and a sample interval <= 0 each give one clear error line and exit code 2 before the simulation starts
# (no report, and an existing file is left as it was). A run killed mid-way leaves no final-named file.
source "$(dirname "$0")/../jobs/cli/lib.sh"
SPEC=$(dirname "$0")/training_small.textproto
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

expect_usage_error() {  # expect_usage_error PATTERN args...
  local pattern=$1 code=0 out
  shift
  out=$("$WARPSIM" --log-level warn run "$SPEC" --progress-seconds 0 "$@" 2>&1) || code=$?
  [[ $code -eq 2 ]] || fail "$*: exit $code, expected 2: $out"
  grep -q -- "$pattern" <<<"$out" || fail "$*: error does not say '$pattern': $out"
  ! grep -q '^step seconds:' <<<"$out" || fail "$*: the simulation ran: $out"
  [[ $(wc -l <<<"$out") -eq 1 ]] || fail "$*: more than one line: $out"
  echo "ok $*: $out"
}
echo keep >"$tmp/exists.h5"
expect_usage_error "already exists (pass --overwrite" --output "$tmp/exists.h5"
[[ $(cat "$tmp/exists.h5") == keep ]] || fail "the existing file was touched"
expect_usage_error "cannot create '$tmp/no/such/dir/x.h5'" --output "$tmp/no/such/dir/x.h5"
expect_usage_error "is a directory" --output "$tmp"
expect_usage_error "--sample-interval must be > 0" --output "$tmp/a.h5" --sample-interval 0
expect_usage_error "--sample-interval must be > 0" --output "$tmp/a.h5" --sample-interval -5
expect_usage_error "--compression must be within" --output "$tmp/a.h5" --compression 12
expect_usage_error "--output-layout must be 'single' or 'per-rank'" --output "$tmp/a.h5" --output-layout one
[[ ! -e $tmp/a.h5 && ! -e $tmp/a.h5.partial ]] || fail "a refused run left a file"

# Killed mid-way (SIGKILL, no chance to clean up): no file under the final name. The default experiment runs
# for longer than the timeout; warpsim runs directly (an MPI singleton) so no orphaned ranks remain.
code=0
timeout -s KILL 3 "$WARPSIM" --log-level warn run "${WARPSIM_SOURCE_DIR:-.}/examples/default.textproto" \
  --sync sequential --progress-seconds 0 --output "$tmp/killed.h5" >/dev/null 2>&1 || code=$?
[[ $code -eq 137 ]] || fail "the long run was expected to be killed (exit 137), it exited $code"
[[ ! -e $tmp/killed.h5 ]] || fail "a killed run left a final-named file"
echo "ok killed run (exit $code) left no final-named file: $(ls -A "$tmp" | tr '\n' ' ')"
