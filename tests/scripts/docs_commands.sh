# The commands README.md and docs/*.md tell users to type exist (issue #25 item 6): every
# `build/warpsim SUBCOMMAND` names a subcommand that `warpsim --help` lists, and every scripts/..., examples/...
# and tests/... path they name (outside the historical benchmark build folders) is in the tree.
# Usage: docs_commands.sh path/to/warpsim [SOURCE-ROOT]
set -euo pipefail
WARPSIM=${1:?usage: $0 warpsim [root]}
ROOT=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$ROOT"
help=$("$WARPSIM" --help)
subcommands=$(sed -n '/^Subcommands:/,$p' <<<"$help" | awk 'NR > 1 && NF { print $1 }')
[[ -n $subcommands ]] || { echo "FAIL: no subcommands in warpsim --help"; exit 1; }
docs=(README.md docs/*.md)
bad=0
# `build/warpsim SUB` (not build-xyz/warpsim: those are the benchmarks' own build folders).
while IFS=: read -r file line sub; do
  grep -qxF -- "$sub" <<<"$subcommands" || { echo "FAIL $file:$line: 'build/warpsim $sub': no such subcommand"; bad=1; }
done < <(grep -noE '(^|[^-[:alnum:]_/])build/warpsim +[a-z][a-z-]*([^-[:alnum:]_/.]|$)' "${docs[@]}" |
         sed -E 's/^([^:]*):([0-9]*):.*build\/warpsim +([a-z-]*).*/\1:\2:\3/')
# Paths into the tree. Placeholders in capitals (SPEC, DIR), globs and "..." are not paths; a line that says
# the file was removed names it on purpose.
while IFS=: read -r file line path; do
  path=${path%.}
  [[ $path =~ [A-Z]{3}|\*|\.\.\.|\{|\<|\$ ]] && continue
  sed -n "${line}p" "$file" | grep -q 'removed' && continue
  [[ -e $path ]] || { echo "FAIL $file:$line: '$path' does not exist"; bad=1; }
done < <(grep -noE '(^|[^-[:alnum:]_/.])(scripts|examples)/[-[:alnum:]_./*{}<>$]+' "${docs[@]}" |
         sed -E 's/^([^:]*):([0-9]*):[^se]*/\1:\2:/')
[[ $bad -eq 0 ]] || exit 1
echo "ok $(grep -oE '(^|[^-[:alnum:]_/])build/warpsim +[a-z]' "${docs[@]}" | wc -l) build/warpsim commands and the" \
  "scripts/ and examples/ paths of README.md and docs/*.md exist"
