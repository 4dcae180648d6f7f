# `warpsim inspect` on a damaged series file (issue #25): one `warpsim: error:` line naming the file and exit
# code 2 -- no HDF5-DIAG error stack, no MPI_ABORT banner -- with and without --trace. The file is a short
# PHOLD run's output with 512 zero bytes written over its metadata at several offsets, and cut short.
source "$(dirname "$0")/../jobs/cli/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$WARPSIM" --log-level warn phold --lps-per-rank 16 --end-time 200 --sync sequential --sample-interval 50 \
  --output "$tmp/good.h5" >/dev/null
"$WARPSIM" inspect "$tmp/good.h5" >/dev/null || fail "inspect of the intact file failed"

# expect_one_line NAME ARGS...: exit code 2 and stderr exactly one `warpsim: error:` line naming the file.
expect_one_line() {
  local name=$1 err code=0
  shift
  err=$("$WARPSIM" "$@" 2>&1 >/dev/null) || code=$?
  [[ $code -eq 2 ]] || fail "$name: exit $code, expected 2 (stderr: $err)"
  [[ $(wc -l <<<"$err") -eq 1 ]] || fail "$name: $(wc -l <<<"$err") stderr lines, expected 1: $err"
  [[ $err == "warpsim: error: "*damaged* ]] || fail "$name: not one 'warpsim: error:' line: $err"
  grep -qF "$name.h5" <<<"$err" || fail "$name: the error does not name the file: $err"
  echo "ok $name $*: $err"
}

for offset in 800 2000 8000 12000; do
  cp "$tmp/good.h5" "$tmp/zero$offset.h5"
  dd if=/dev/zero of="$tmp/zero$offset.h5" bs=1 seek=$offset count=512 conv=notrunc 2>/dev/null
  expect_one_line "zero$offset" inspect "$tmp/zero$offset.h5"
  expect_one_line "zero$offset" inspect "$tmp/zero$offset.h5" --trace "$tmp/zero$offset.json"
done
# Cut short: HDF5 cannot open it at all.
head -c 6000 "$tmp/good.h5" >"$tmp/cut.h5"
err=$("$WARPSIM" inspect "$tmp/cut.h5" 2>&1 >/dev/null) && fail "cut.h5: exit 0"
[[ $(wc -l <<<"$err") -eq 1 && $err == "warpsim: error: "*cut.h5* ]] || fail "cut.h5: $err"
echo "ok cut: $err"
