# A 16-experiment sweep of the 64-GPU test experiment with --jobs 2, stopped part-way (SIGTERM) and resumed:
# the resumed run runs only the missing experiments (finished results keep their inode and mtime), the end
# state is 16 results (summary + HDF5 file each) and a 16-row index (CSV and HDF5), and a third run has nothing left to do.
set -euo pipefail
WARPSIM=${1:?usage: $0 path/to/warpsim}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/warpsim-sweep-test.XXXXXX")
trap 'rc=$?; if ((rc == 0)); then rm -rf "$work"; else echo "work dir kept: $work" >&2; fi' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
value() { sed -n "s/^$1: //p" <<<"$2"; }
spec=$here/small64-sweep.textproto
out=$work/out
count_results() { find "$out/results" -name '*.txt' 2>/dev/null | wc -l; }

"$WARPSIM" sweep "$spec" --out "$out" --jobs 2 >"$work/first.out" 2>"$work/first.err" &
pid=$!
for _ in $(seq 1 600); do  # at most 60 s
  (($(count_results) >= 4)) && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
kill -TERM "$pid" 2>/dev/null || true
rc=0
wait "$pid" || rc=$?
first=$(<"$work/first.out")
done_before=$(count_results)
echo "interrupted run: exit $rc, $done_before results"
((rc == 130)) || fail "interrupted sweep exited $rc, not 130: $(cat "$work/first.err")"
[[ $(value interrupted "$first") == yes ]] || fail "summary does not say interrupted: $first"
((done_before >= 4 && done_before < 16)) || fail "expected a partial sweep, got $done_before results"
[[ -z $(find "$out/results" -name '*.part') ]] || fail "partial outputs left behind"
[[ $(grep -c ',done,' "$out/index.csv") -eq $done_before ]] || fail "index done rows != results after interrupt"
[[ $(grep -c ',pending,' "$out/index.csv") -eq $((16 - done_before)) ]] || fail "index pending rows wrong"
stat -c '%n %i %.9Y' "$out"/results/*.txt | sort >"$work/before.stat"

second=$("$WARPSIM" sweep "$spec" --out "$out" --jobs 2 --no-progress)
echo "$second"
[[ $(value skipped "$second") -eq $done_before ]] || fail "resume skipped $(value skipped "$second"), not $done_before"
[[ $(value ran "$second") -eq $((16 - done_before)) ]] || fail "resume ran $(value ran "$second")"
[[ $(value failed "$second") -eq 0 ]] || fail "experiments failed on resume"
(($(count_results) == 16)) || fail "expected 16 results files, got $(count_results)"
h5=$(find "$out/results" -name '*.h5' | wc -l)
((h5 == 16)) || fail "expected 16 HDF5 results files, got $h5"
# Results finished before the interrupt were not rewritten (same inode and mtime).
while read -r name inode mtime; do
  grep -qx "$name $inode $mtime" <(stat -c '%n %i %.9Y' "$name") || fail "$name was redone on resume"
done <"$work/before.stat"
[[ $(($(wc -l <"$out/index.csv") - 1)) -eq 16 ]] || fail "index.csv does not have 16 rows"
[[ $(grep -c ',done,' "$out/index.csv") -eq 16 ]] || fail "not every index row is done"
# Every row carries its metrics.
awk -F, 'NR > 1 && ($8 == "" || $8 + 0 <= 0) { bad = 1 } END { exit bad }' "$out/index.csv" ||
  fail "a row lacks step_seconds"

third=$("$WARPSIM" sweep "$spec" --out "$out" --jobs 2 --no-progress)
[[ $(value ran "$third") -eq 0 && $(value skipped "$third") -eq 16 ]] || fail "third run redid work: $third"

if /usr/bin/python3 -c 'import h5py' 2>/dev/null; then
  /usr/bin/python3 - "$out/index.h5" <<'PY'
import sys, h5py, math
rows = h5py.File(sys.argv[1], "r")["experiments"][:]
assert len(rows) == 16, len(rows)
assert all(r["status"] in (b"done", "done") for r in rows)
assert all(r["step_seconds"] > 0 and not math.isnan(r["step_seconds"]) for r in rows)
print("index.h5: 16 rows, all done")
PY
fi
# The experimental in-process path (4 experiments per engine, LP ids offset) gives the same step times.
"$WARPSIM" sweep "$spec" --out "$work/inproc" --in-process 4 --no-progress >/dev/null 2>&1 || fail "--in-process failed"
col() { awk -F, -v name="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i } NR > 1 { print $1, $c }' "$1"; }
diff <(col "$out/index.csv" step_seconds) <(col "$work/inproc/index.csv" step_seconds) >&2 ||
  fail "--in-process step times differ from the child-process runs"
echo "ok: --in-process 4 gives the same 16 step times"
echo "ok: interrupted after $done_before, resumed the other $((16 - done_before)), 16 results, 16-row index"
