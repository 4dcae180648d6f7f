# expect_exit2 NAME WANTED-TEXT COMMAND...: COMMAND must exit with code 2 and print exactly one
# `warpsim: error:` line (only rank 0 reports), which contains WANTED-TEXT. Sourced by the bad-input tests
# of several suites so that they all hold every refusal to the same rule.
expect_exit2() {
  local name=$1 wanted=$2 code=0 err errors
  shift 2
  err=$("$@" 2>&1 >/dev/null) || code=$?
  errors=$(grep '^warpsim: error: ' <<<"$err" || true)
  if [[ $code -ne 2 ]] || [[ $(grep -c . <<<"$errors") -ne 1 ]] || ! grep -qF -- "$wanted" <<<"$errors"; then
    echo "FAIL $name: exit $code, wanted exit 2 and one 'warpsim: error:' line with '$wanted', got:"
    echo "$err"
    exit 1
  fi
  echo "ok $name: $errors"
}
