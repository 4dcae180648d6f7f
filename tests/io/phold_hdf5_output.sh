# PHOLD --output end to end: the reader test (shapes, units, series total == engine committed count),
# identical dataset contents for sequential vs conservative/optimistic on 1/2/4 ranks and both partitions,
# `warpsim inspect` (listing, summary, top-N, trace export) and the analysis script's PNGs.
# Args: path/to/warpsim. Env: WARPSIM_MPIEXEC, WARPSIM_PYTHON (an interpreter with h5py), WARPSIM_SOURCE_DIR.
source "$(dirname "$0")/../jobs/cli/lib.sh"
PY=${WARPSIM_PYTHON:-/usr/bin/python3}
SRC=${WARPSIM_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

LPS=512
ARGS=(--end-time 500 --sample-interval 25 --remote 0.5)
SAMPLES=20

ref=$(run_np 1 phold --sync sequential --lps-per-rank $LPS "${ARGS[@]}" --output "$tmp/seq.h5")
committed=$(value "events committed" "$ref")
[[ -n $committed && $committed -gt 0 ]] || fail "sequential run committed nothing"
[[ -f $tmp/seq.h5 && ! -e $tmp/seq.h5.partial ]] || fail "no final file (or a leftover .partial)"
"$PY" "$here/check_series_file.py" "$tmp/seq.h5" "$committed" $LPS $SAMPLES || fail "reader test"

# h5diff exits 0 only when the objects compare equal; /meta (ranks, sync, wall time) may differ.
same_results() {
  local a=$1 b=$2 g
  for g in /series /components /summary; do
    h5diff "$a" "$b" "$g" "$g" >/dev/null || return 1
  done
}
# Negative control: a different seed must give a different file, or h5diff would prove nothing.
run_np 1 phold --sync sequential --lps-per-rank $LPS "${ARGS[@]}" --seed 7 --output "$tmp/seed7.h5" >/dev/null
! same_results "$tmp/seq.h5" "$tmp/seed7.h5" || fail "h5diff does not see a different seed"

for spec in "1 512 optimistic block" "2 256 optimistic block" "2 256 conservative round-robin" \
  "4 128 optimistic block" "4 128 optimistic round-robin"; do
  read -r np per sync part <<<"$spec"
  out=$(run_np "$np" phold --sync "$sync" --partition "$part" --lps-per-rank "$per" "${ARGS[@]}" \
    --output "$tmp/run.h5" --overwrite)
  [[ $(value "events committed" "$out") == "$committed" ]] || fail "$spec: committed count differs"
  same_results "$tmp/seq.h5" "$tmp/run.h5" || fail "$spec: HDF5 contents differ from the sequential run"
  echo "ok $sync/$part np=$np: /series /components /summary identical to sequential" \
    "(rolled back $(value "events rolled back" "$out"))"
done

# inspect: listing with shapes and units, summary, top-N, trace export of 16 components.
info=$(run_np 1 inspect "$tmp/run.h5" --metric phold_lp/events --top 5 --all --trace "$tmp/trace.json" --components 0-15)
grep -q "^/series/phold_lp/events  \[$LPS, $SAMPLES\] float64  unit=events  aggregation=sum$" <<<"$info" ||
  fail "inspect does not list the events dataset: $info"
grep -q "^  events_committed: $committed events$" <<<"$info" || fail "inspect summary: $info"
[[ $(grep -c '^ *[0-9]*\. id [0-9]* (lp[0-9]*): ' <<<"$info") -eq 5 ]] || fail "inspect top 5: $info"
# The top entry's total is the largest row sum.
top=$(sed -n 's/^ *1\. id [0-9]* (lp[0-9]*): //p' <<<"$info")
want_top=$("$PY" -c "import h5py,sys; print('%.12g' % h5py.File(sys.argv[1])['series/phold_lp/events'][()].sum(1).max())" "$tmp/run.h5")
[[ $top == "$want_top" ]] || fail "inspect top-1 total $top, expected $want_top"
"$PY" "$here/check_trace.py" "$tmp/trace.json" "$tmp/run.h5" 0 15 || fail "trace export"
echo "ok inspect: listing, summary, top-5 (max total $top), trace"

# The analysis script turns the file into its PNGs.
"$PY" "$SRC/scripts/analysis/plot_results.py" "$tmp/run.h5" "$tmp/plots" >/dev/null || fail "plot_results.py"
for png in heatmap_phold_lp_events distribution_phold_lp_events summary; do
  f="$tmp/plots/$png.png"
  [[ -s $f && $(head -c 4 "$f" | tail -c 3) == PNG ]] || fail "missing or invalid $png.png"
done
echo "ok plot_results.py wrote its PNGs"
