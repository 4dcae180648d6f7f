# A held job shows PENDING, `warpsim cancel` cancels it, and status then reports CANCELLED (and --wait exits 1
# because the job did not complete). An unknown job id is an error (exit 1).
source "$(dirname "$0")/lib.sh"
id=$(submit --hold -- phold --end-time 100)
report=$("$WARPSIM" status "$id") || fail "status $id failed"
grep -q "^$id  *PENDING " <<<"$report" || fail "held job not PENDING: $report"
"$WARPSIM" cancel "$id" || fail "cancel $id failed"
code=0
report=$("$WARPSIM" status --wait 30 --poll 0.5 "$id") || code=$?
[[ $code -eq 1 ]] || fail "status --wait of a cancelled job exited $code, expected 1"
grep -q "^$id  *CANCELLED " <<<"$report" || fail "cancelled job not CANCELLED: $report"
echo "ok job $id: PENDING (held) -> cancelled -> CANCELLED"
code=0
"$WARPSIM" status 99999999 2>/dev/null || code=$?
[[ $code -eq 1 ]] || fail "status of an unknown job exited $code, expected 1"
echo "ok unknown job id -> exit 1"
