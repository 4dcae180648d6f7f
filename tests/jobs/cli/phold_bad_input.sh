# Bad CLI input gets a one-line error on stderr and exit code 2, on 1 and on 2 ranks.
source "$(dirname "$0")/lib.sh"

expect_usage_error() {
  local np=$1
  shift
  local err code=0
  err=$($MPIEXEC -np "$np" "$WARPSIM" "$@" 2>&1 >/dev/null) || code=$?
  # mpiexec adds its own lines about the failed job; the program's message is the warpsim line.
  local ours
  ours=$(printf '%s\n' "$err" | grep -c '^warpsim: error: ' || true)
  [[ $code -eq 2 ]] || fail "'$*' on $np ranks exited $code, expected 2 (stderr: $err)"
  [[ $ours -eq 1 ]] || fail "'$*' on $np ranks printed $ours error lines, expected 1 (stderr: $err)"
  echo "ok np=$np '$*': $(printf '%s\n' "$err" | grep '^warpsim: error: ')"
}

for np in 1 2; do
  expect_usage_error "$np" phold --lps-per-rank -5
  expect_usage_error "$np" phold --lps-per-rank=0
  expect_usage_error "$np" phold --start-events -1
  expect_usage_error "$np" phold --sync speculative
  expect_usage_error "$np" phold --end-time 0
  expect_usage_error "$np" phold --end-time -3
  expect_usage_error "$np" phold --remote 1.5
  expect_usage_error "$np" phold --mean 0
  expect_usage_error "$np" phold --lps-per-rank abc
  expect_usage_error "$np" phold --no-such-flag
  expect_usage_error "$np" phold --gvt-interval 0
  expect_usage_error "$np" phold --idle-sleep-us -2
  expect_usage_error "$np" phold --poll-us -2
  expect_usage_error "$np" phold --poll-us 1000001
  expect_usage_error "$np" phold --optimism-control sometimes
  expect_usage_error "$np" phold --rollback-target 0
  expect_usage_error "$np" phold --rollback-target 1.5
  expect_usage_error "$np" phold --partition metis-typo
  expect_usage_error "$np" phold --sync conservative --lookahead 0
done
expect_usage_error 2 phold --sync sequential
expect_usage_error 1 no-such-command
