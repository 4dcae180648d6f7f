# `warpsim --version` (issue #25 item 2): one line "warpsim VERSION (git REVISION)", VERSION being the
# project() version of CMakeLists.txt, exit 0; listed in --help.
source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
want=$(sed -n 's/^project(warpsim VERSION \([0-9.]*\).*/\1/p' "$ROOT/CMakeLists.txt")
[[ -n $want ]] || fail "no project(warpsim VERSION ...) in CMakeLists.txt"
out=$("$WARPSIM" --version) || fail "--version exited $?"
[[ $out =~ ^warpsim\ ${want//./\\.}\ \(git\ ([0-9a-f]{12}|unknown)\)$ ]] || fail "--version printed '$out'"
"$WARPSIM" --help | grep -q -- '--version' || fail "--help does not list --version"
echo "ok $out"
