# `warpsim run --output` end to end on a small training experiment: the reader test (shapes, units, series
# totals == the report's totals), identical /series, /components and /summary for sequential vs
# conservative/optimistic on 1/2/4 ranks and both partitions, the per-rank layout (rank files joined by virtual
# datasets) on 2/4 ranks, `warpsim inspect`, and the analysis script's
# training PNGs (GPU utilization heatmap, link utilization distribution, step-time breakdown).
# Args: path/to/warpsim. Env: WARPSIM_MPIEXEC, WARPSIM_PYTHON (an interpreter with h5py), WARPSIM_SOURCE_DIR.
source "$(dirname "$0")/../jobs/cli/lib.sh"
PY=${WARPSIM_PYTHON:-/usr/bin/python3}
SRC=${WARPSIM_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
here=$(dirname "$0")
SPEC=$here/training_small.textproto
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ref=$(run_np 1 run "$SPEC" --sync sequential --progress-seconds 0 --output "$tmp/seq.h5")
[[ -f $tmp/seq.h5 && ! -e $tmp/seq.h5.partial ]] || fail "no final file (or a leftover .partial)"
[[ $(value "output file" "$ref") == "$tmp/seq.h5" ]] || fail "the report does not name the output file"
"$PY" "$here/check_training_file.py" "$tmp/seq.h5" "$(value gpus "$ref")" "$(value steps "$ref")" ||
  fail "reader test"

# h5diff exits 0 only when the objects compare equal; /meta (ranks, sync, wall time) may differ.
same_results() {
  local a=$1 b=$2 g
  for g in /series /components /summary; do
    h5diff "$a" "$b" "$g" "$g" >/dev/null || return 1
  done
}
# Negative control: another sample interval must give a different file, or h5diff would prove nothing.
run_np 1 run "$SPEC" --sync sequential --progress-seconds 0 --output "$tmp/other.h5" --sample-interval 5000 \
  >/dev/null
! same_results "$tmp/seq.h5" "$tmp/other.h5" || fail "h5diff does not see a different interval"

for case in "1 optimistic block" "2 optimistic block" "2 conservative round-robin" "4 optimistic block" \
  "4 optimistic round-robin"; do
  read -r np sync part <<<"$case"
  out=$(run_np "$np" run "$SPEC" --sync "$sync" --partition "$part" --progress-seconds 0 --output "$tmp/run.h5" \
    --overwrite --output-layout single)
  [[ $(value "state digest" "$out") == "$(value "state digest" "$ref")" ]] || fail "$case: state digest differs"
  same_results "$tmp/seq.h5" "$tmp/run.h5" || fail "$case: HDF5 contents differ from the sequential run"
  [[ ! -e $tmp/run.h5.ranks ]] || fail "$case: --output-layout single left a rank directory"
  echo "ok $sync/$part np=$np, one file: /series /components /summary identical to sequential" \
    "(rolled back $(value "events rolled back" "$out"))"
done

# The per-rank layout (the default with several ranks): each rank's file in pr.h5.ranks/, pr.h5 joins them
# with virtual datasets; readers see the same contents. A one-file result written over it removes the rank
# directory.
for case in "2 optimistic block" "4 optimistic round-robin" "2 conservative round-robin"; do
  read -r np sync part <<<"$case"
  out=$(run_np "$np" run "$SPEC" --sync "$sync" --partition "$part" --progress-seconds 0 --output "$tmp/pr.h5" \
    --overwrite)
  same_results "$tmp/seq.h5" "$tmp/pr.h5" || fail "per-rank $case: HDF5 contents differ from the sequential run"
  [[ $(ls "$tmp/pr.h5.ranks" | grep -c '^rank-[0-9]*\.h5$') -eq $np ]] || fail "per-rank $case: not $np rank files"
  [[ ! -e $tmp/pr.h5.partial && ! -e $tmp/pr.h5.ranks.partial ]] || fail "per-rank $case: leftover .partial"
  [[ $(value "output bytes" "$out") -gt $(stat -c %s "$tmp/pr.h5") ]] || fail "output bytes omit the rank files"
  echo "ok per-rank $sync/$part np=$np: /series /components /summary identical to sequential"
done
# Flow fidelity has no packet NICs: an empty kind, written as plain empty datasets in the per-rank layout.
sed 's/network {/network { fidelity: "flow"/' "$SPEC" >"$tmp/flow.textproto"
run_np 1 run "$tmp/flow.textproto" --sync sequential --progress-seconds 0 --output "$tmp/flow_seq.h5" >/dev/null
run_np 2 run "$tmp/flow.textproto" --progress-seconds 0 --output "$tmp/flow_pr.h5" >/dev/null
same_results "$tmp/flow_seq.h5" "$tmp/flow_pr.h5" || fail "per-rank flow fidelity: contents differ from sequential"
echo "ok per-rank flow fidelity np=2 (no NICs): identical to sequential"
mv "$tmp/pr.h5.ranks" "$tmp/moved"
code=0
err=$(run_np 1 inspect "$tmp/pr.h5" 2>&1) || code=$?
[[ $code -eq 2 ]] && grep -q "which is missing (copy the directory pr.h5.ranks" <<<"$err" ||
  fail "inspect of a per-rank result without its rank files: exit $code: $err"
code=0
err=$("$PY" "$SRC/scripts/analysis/plot_results.py" "$tmp/pr.h5" "$tmp/prplots" 2>&1) || code=$?
[[ $code -eq 2 ]] && grep -q "which is missing" <<<"$err" || fail "plot_results.py without rank files: $code: $err"
mv "$tmp/moved" "$tmp/pr.h5.ranks"
run_np 2 run "$SPEC" --progress-seconds 0 --output "$tmp/pr.h5" --overwrite --output-layout single >/dev/null
[[ ! -e $tmp/pr.h5.ranks ]] || fail "a one-file result left the earlier rank directory"
same_results "$tmp/seq.h5" "$tmp/pr.h5" || fail "one-file result over a per-rank one differs"
echo "ok a per-rank result without its rank files is refused by inspect and plot_results.py; overwritten cleanly"

info=$(run_np 1 inspect "$tmp/run.h5" --metric switch_port/bytes --top 3 --all)
grep -q '^/series/gpu/busy  \[16, [0-9]*\] float64  unit=fraction  aggregation=time_average$' <<<"$info" ||
  fail "inspect does not list /series/gpu/busy: $info"
[[ $(grep -c '^ *[0-9]*\. id [0-9]* (.*\.p[0-9]*): ' <<<"$info") -eq 3 ]] || fail "inspect top 3: $info"
echo "ok inspect lists the training kinds and ranks switch ports"

"$PY" "$SRC/scripts/analysis/plot_results.py" "$tmp/seq.h5" "$tmp/plots" >/dev/null || fail "plot_results.py"
for png in gpu_utilization link_utilization step_breakdown; do
  f="$tmp/plots/$png.png"
  [[ -s $f && $(head -c 4 "$f" | tail -c 3) == PNG ]] || fail "missing or invalid $png.png"
done
echo "ok plot_results.py wrote gpu_utilization, link_utilization and step_breakdown PNGs"
