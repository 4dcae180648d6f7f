# Shared by the spec bad-input tests: `expect NAME FIELD SED-EXPRESSION` rewrites $SPEC with the sed expression,
# runs `warpsim run` on the result and requires exit code 2 with exactly one error line that names FIELD.
# The caller sets WARPSIM, SPEC and TMP (a scratch directory it cleans up).
expect() {
  local name=$1 field=$2 expr=$3 code=0 err
  sed -e "$expr" "$SPEC" >"$TMP/$name.textproto"
  cmp -s "$SPEC" "$TMP/$name.textproto" && { echo "FAIL: $name: rewrite did not apply"; exit 1; }
  err=$("$WARPSIM" run "$TMP/$name.textproto" --sync sequential 2>&1 >/dev/null) || code=$?
  [[ $code -eq 2 ]] || { echo "FAIL: $name exited $code, expected 2 ($err)"; exit 1; }
  [[ $(wc -l <<<"$err") -eq 1 ]] || { echo "FAIL: $name: more than one line: $err"; exit 1; }
  grep -q -- "$field" <<<"$err" || { echo "FAIL: $name: error does not name '$field': $err"; exit 1; }
  echo "ok $name: $err"
}
