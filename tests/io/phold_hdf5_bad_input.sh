# Bad --output input is rejected before the simulation starts: one `warpsim: error:` line, exit code 2, on
# 1 and 2 ranks; an existing file is left untouched without --overwrite and replaced with it.
source "$(dirname "$0")/../jobs/cli/lib.sh"
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp"; rm -rf "$tmp"' EXIT

expect_usage_error() {
  local np=$1
  shift
  local err code=0
  # One rank runs as an MPI singleton (no mpiexec): a third of the start-up time on a loaded machine.
  if [[ $np -eq 1 ]]; then
    err=$("$WARPSIM" "$@" 2>&1 >/dev/null) || code=$?
  else
    err=$($MPIEXEC -np "$np" "$WARPSIM" "$@" 2>&1 >/dev/null) || code=$?
  fi
  local ours
  ours=$(printf '%s\n' "$err" | grep -c '^warpsim: error: ' || true)
  [[ $code -eq 2 ]] || fail "'$*' on $np ranks exited $code, expected 2 (stderr: $err)"
  [[ $ours -eq 1 ]] || fail "'$*' on $np ranks printed $ours error lines, expected 1 (stderr: $err)"
  echo "ok np=$np '$*': $(printf '%s\n' "$err" | grep '^warpsim: error: ')"
}

echo "not a results file" >"$tmp/existing.h5"
mkdir "$tmp/readonly" && chmod a-w "$tmp/readonly"
# A long end time: if a check came after the simulation, the test would time out instead of passing.
long=(phold --lps-per-rank 64 --end-time 100000000)
# The path checks run on rank 0 and are broadcast: check them on 2 ranks too.
for np in 1 2; do
  expect_usage_error "$np" "${long[@]}" --output "$tmp/no/such/dir/out.h5"
  expect_usage_error "$np" "${long[@]}" --output "$tmp/existing.h5"
  expect_usage_error "$np" "${long[@]}" --output "$tmp/x.h5" --sample-interval 0
done
expect_usage_error 1 "${long[@]}" --output "$tmp"
expect_usage_error 1 "${long[@]}" --output "$tmp/x.h5" --sample-interval -5
expect_usage_error 1 "${long[@]}" --output "$tmp/x.h5" --sample-interval nan
expect_usage_error 1 "${long[@]}" --output "$tmp/x.h5" --compression 11
expect_usage_error 1 "${long[@]}" --sample-interval 10
expect_usage_error 1 "${long[@]}" --overwrite
expect_usage_error 1 inspect "$tmp/existing.h5"
expect_usage_error 1 inspect "$tmp/missing.h5"
if [[ $(id -u) -ne 0 ]]; then  # root writes through the permission bits
  expect_usage_error 1 "${long[@]}" --output "$tmp/readonly/out.h5"
fi
[[ $(cat "$tmp/existing.h5") == "not a results file" ]] || fail "an existing file was modified"
[[ ! -e $tmp/x.h5 && ! -e $tmp/x.h5.partial ]] || fail "a rejected run left a file"

# With --overwrite the existing file is replaced; a missing --metric in inspect is a usage error.
run_np 1 phold --lps-per-rank 16 --end-time 50 --sample-interval 10 --output "$tmp/existing.h5" --overwrite >/dev/null
h5ls "$tmp/existing.h5/series/phold_lp" >/dev/null || fail "--overwrite did not write an HDF5 file"
expect_usage_error 1 inspect "$tmp/existing.h5" --metric phold_lp/no_such_metric
expect_usage_error 1 inspect "$tmp/existing.h5" --metric nonsense
expect_usage_error 1 inspect "$tmp/existing.h5" --trace "$tmp/t.json" --components 3-1
expect_usage_error 1 inspect "$tmp/existing.h5" --trace "$tmp/t.json" --components 0-99
echo "ok --overwrite replaced the file"
