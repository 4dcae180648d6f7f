#!/usr/bin/env bash
# One-off, idempotent: moves the spec protos and loaders from jobs/spec/ to experiment/spec/ (issue #21: the
# spec belongs to the experiment layer, not to the front ends) and rewrites every path that names them.
# Safe to run twice and on a tree that gained new files still using the old path.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ -d jobs/spec ]]; then
  mkdir -p experiment
  git mv jobs/spec experiment/spec
fi
mapfile -t files < <(git ls-files -co --exclude-standard | grep -Ev '^(build|\.git)/' |
                     grep -E '\.(cpp|hpp|h|proto|txt|cmake|sh|py|md|textproto)$|CMakeLists\.txt$' |
                     grep -v '^scripts/dev/move-spec\.sh$' || true)
for f in "${files[@]}"; do
  [[ -f $f ]] || continue
  if grep -q 'jobs/spec' "$f"; then
    sed -i 's#jobs/spec#experiment/spec#g' "$f"
  fi
done
echo "move-spec: done"
