#!/usr/bin/env bash
# Splits engine/ into the model-facing API (engine/, library warpsim_model_api, no MPI) and the Time Warp
# kernel (engine/kernel/, library warpsim_engine), issue #21.
#
# 1. git mv each kernel file from engine/ to engine/kernel/ if it is still in the old place;
# 2. rewrites every mention of a moved file, engine/X -> engine/kernel/X, across the tree: #include lines
#    and comments in C++ sources (*.cpp *.cc *.hpp *.h), paths in CMake files, scripts (*.sh *.py, .ci/)
#    and docs (*.md).
#
# Idempotent: safe to run twice, and on a tree where merged branches added new files that still use the old
# include paths (re-run it after every merge that touches engine users). It only touches tracked files and
# untracked files git does not ignore; it never edits itself. Usage: scripts/dev/move-engine-kernel.sh
# [--check]   (--check: change nothing, exit 1 if a move or rewrite is still due).
set -euo pipefail
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"

check_only=0
if [[ ${1:-} == --check ]]; then check_only=1; fi

# The kernel's files. Everything else in engine/ is the model-facing API (lp_type, lp_context, event,
# model, random, sim_time, hash, checkpoint_io, series_recorder*, zeroed_buffer) and stays.
kernel_files=(
  checkpoint.cpp checkpoint_config.hpp checkpoint_signal.cpp checkpoint_signal.hpp
  conservative.cpp
  engine.cpp engine.hpp engine_config.hpp engine_stats.hpp
  event_pool.cpp event_pool.hpp
  local_index.cpp local_index.hpp
  lp_map.hpp
  mpi_session.hpp mpi_transport.cpp mpi_transport.hpp
  optimism_control.cpp optimism_control.hpp optimistic.cpp
  pending_queue.cpp pending_queue.hpp
  process_memory.hpp processed_log.hpp
  remote_event_index.cpp remote_event_index.hpp
)

pending=0
if ((!check_only)); then mkdir -p engine/kernel; fi
for f in "${kernel_files[@]}"; do
  old=engine/$f new=engine/kernel/$f
  if [[ -e $old && -e $new ]]; then
    echo "move-engine-kernel: both $old and $new exist; merge them by hand" >&2
    exit 2
  fi
  if [[ -e $old ]]; then
    pending=1
    if ((check_only)); then
      echo "due: git mv $old $new"
    elif git ls-files --error-unmatch "$old" >/dev/null 2>&1; then
      git mv "$old" "$new"
    else
      mv "$old" "$new"
    fi
  fi
done

# Files to rewrite: tracked plus untracked-but-not-ignored, by type; never this script.
self=scripts/dev/move-engine-kernel.sh
mapfile -d '' files < <(git ls-files -z -co --exclude-standard -- \
  '*.cpp' '*.cc' '*.hpp' '*.h' '*.md' 'CMakeLists.txt' '*/CMakeLists.txt' '*.cmake' '*.sh' '*.py' '.ci/*' |
  grep -zv "^${self}\$" || true)

names=$(printf '%s\n' "${kernel_files[@]}")
export MOVE_KERNEL_NAMES=$names MOVE_KERNEL_CHECK=$check_only
set +e
# shellcheck disable=SC2016  # the Python program is single-quoted on purpose
printf '%s\0' "${files[@]}" | python3 -c '
import os, re, sys
names = os.environ["MOVE_KERNEL_NAMES"].split()
check = os.environ["MOVE_KERNEL_CHECK"] == "1"
alt = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
# engine/X where engine/ starts a path (start, after a non-path char, or after "}/" as in
# ${PROJECT_SOURCE_DIR}/engine/X) and X is a whole moved file name (not a prefix of a longer name).
# tests/engine/X, engine/kernel/X and engine/X.in are left alone, which makes the rewrite idempotent.
pattern = re.compile(r"(?:(?<=\}/)|(?<![\w.\-/$]))engine/(" + alt + r")(?![\w-]|\.\w)")
changed = 0
for path in sys.stdin.read().split("\0"):
    if not path or not os.path.isfile(path):
        continue
    try:
        text = open(path, encoding="utf-8").read()
    except UnicodeDecodeError:
        continue
    new, n = pattern.subn(r"engine/kernel/\1", text)
    if n:
        changed += 1
        if check:
            print(f"due: {path}: {n} mention(s) of moved engine files")
        else:
            with open(path, "w", encoding="utf-8") as out:
                out.write(new)
            print(f"rewrote {path}: {n}")
sys.exit(3 if changed else 0)
'
rc=$?
set -e
if ((rc == 3)); then
  pending=1
elif ((rc != 0)); then
  exit "$rc"
fi

if ((check_only)); then
  if ((pending)); then exit 1; fi
  echo "move-engine-kernel: nothing due"
elif ((pending)); then
  echo "move-engine-kernel: done (re-run with --check to confirm nothing is left)"
else
  echo "move-engine-kernel: nothing to do"
fi
