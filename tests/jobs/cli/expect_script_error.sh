# Sourced by the tests of the plot scripts under scripts/analysis/ (economics_plots.py, shared_fabric_plot.py,
# resilience_plot.py): expect_error NAME PATTERN ARGS... runs "$PY" "$PLOTS" ARGS... and requires exit code 2
# and exactly one line on stderr, "<script>: error: ...PATTERN...". Needs PY, PLOTS and TMP set.
expect_error() {
  local name=$1 pattern=$2 script
  script=$(basename "$PLOTS")
  shift 2
  set +e
  "$PY" "$PLOTS" "$@" >"$TMP/out" 2>"$TMP/err"
  local rc=$?
  set -e
  if [ $rc -ne 2 ] || [ "$(wc -l <"$TMP/err")" -ne 1 ] || ! grep -q "$script: error: .*$pattern" "$TMP/err"; then
    echo "FAIL $name: rc=$rc"
    cat "$TMP/err"
    exit 1
  fi
  echo "ok $name: $(cat "$TMP/err")"
}
