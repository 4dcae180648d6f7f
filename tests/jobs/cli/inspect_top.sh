# `warpsim inspect FILE --metric M --top N` prints the top-N list and nothing else (issue #25 item 6): one
# heading line and N rows, not the ~300-line file description; without --metric/--top the description is
# printed as before, and --all prints both.
source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/warpsim-inspect-top.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
"$WARPSIM" --log-level warn run "$ROOT/tests/io/training_small.textproto" --sync sequential \
  --output "$TMP/s.h5" >/dev/null
out=$("$WARPSIM" inspect "$TMP/s.h5" --metric gpu/busy --top 3)
[[ $(grep -c . <<<"$out") -eq 4 ]] || fail "--metric gpu/busy --top 3: expected 4 lines, got:
$out"
[[ $(head -n 1 <<<"$out") == "top 3 components by mean of gpu/busy"* ]] || fail "heading: $out"
echo "ok --metric --top: 4 lines"
out=$("$WARPSIM" inspect "$TMP/s.h5" --top 2)
[[ $(grep -c . <<<"$out") -eq 3 ]] || fail "--top 2: expected 3 lines, got: $out"
echo "ok --top alone"
full=$("$WARPSIM" inspect "$TMP/s.h5")
grep -q '^top 10 components' <<<"$full" || fail "plain inspect lost the top-10 list"
[[ $(grep -c . <<<"$full") -gt 20 ]] || fail "plain inspect lost the file description"
both=$("$WARPSIM" inspect "$TMP/s.h5" --metric gpu/busy --top 3 --all)
[[ $(grep -c . <<<"$both") -gt 20 ]] && grep -q '^top 3 components' <<<"$both" || fail "--all: $both"
echo "ok plain inspect and --all keep the description"
