#!/usr/bin/env bash
# `warpsim validate` starts each row as a child of the running binary. A rebuild (or removal) of the binary
# file while a validation runs must not kill its later rows, nor mix two models in one table: the children run
# /proc/self/exe, the parent's own image. Three copies of the smallest shipped row, one at a time, from a copy
# of the binary that is removed as soon as the first row has started; all rows must finish with the same
# prediction.
set -euo pipefail
WARPSIM=${1:?usage: $0 path/to/warpsim}
SRC=$(cd "$(dirname "$0")/../../.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
ROW=$SRC/validation/nemo-24.07-h100/04-llama2-7b-8xh100.textproto
mkdir "$TMP/set"
cp "$ROW" "$TMP/set/a.textproto"
cp "$ROW" "$TMP/set/b.textproto"
cp "$ROW" "$TMP/set/c.textproto"
cp "$WARPSIM" "$TMP/warpsim-copy"
"$TMP/warpsim-copy" --log-level warn validate "$TMP/set" --jobs 1 >"$TMP/out" 2>"$TMP/err" &
pid=$!
for _ in $(seq 1000); do  # at most 10 s for the first row to start
  grep -q "start" "$TMP/err" "$TMP/out" 2>/dev/null && break
  sleep 0.01
done
rm "$TMP/warpsim-copy"
rc=0
wait "$pid" || rc=$?
cat "$TMP/out"
[[ $rc -eq 0 ]] || { echo "FAIL: validate exited $rc"; cat "$TMP/err"; exit 1; }
grep -q "^set: rows 3, failed 0" "$TMP/out" || { echo "FAIL: summary line"; exit 1; }
a=$(awk '$1 == "set/a" { print $3 }' "$TMP/out")
b=$(awk '$1 == "set/b" { print $3 }' "$TMP/out")
c=$(awk '$1 == "set/c" { print $3 }' "$TMP/out")
[[ -n $a && $a == "$b" && $a == "$c" ]] || { echo "FAIL: rows a ($a), b ($b) and c ($c) differ"; exit 1; }
echo "ok: validate_binary_replaced"
