#!/usr/bin/env bash
# Layer check (CI: ctest -R '^layers$'): fails when an #include or a link crosses a layer boundary.
#
# Rules (one line each; docs/architecture.md quotes them; `--list` prints them from the code below):
# R1 models/** includes nothing from jobs/, experiment/, partition/, io/, engine/kernel/, and never <mpi.h>.
# R2 engine/* (the model-facing API, top level only) includes nothing from engine/kernel/, models/, partition/, io/, jobs/, experiment/, and never <mpi.h>.
# R3 engine/kernel/** includes nothing from models/, partition/, io/, jobs/, experiment/.
# R4 partition/** and io/** include nothing from models/, jobs/, experiment/.
# R5 experiment/** includes nothing from jobs/.
# R6 experiment/spec/** includes from models/ only *_params.hpp (plain parameter structs), and nothing from partition/ or io/.
# R7 nothing outside jobs/ and tests/ includes jobs/.
# L1 the model libraries (warpsim_models, warpsim_cluster, warpsim_workload, warpsim_training, warpsim_energy, warpsim_reliability) do not link, directly or transitively, MPI, warpsim_engine, warpsim_spec, warpsim_partition, warpsim_io, warpsim_hdf5 or warpsim_experiment.
# L2 warpsim_model_api does not link MPI, directly or transitively.
#
# Includes are read from C++ sources and headers (*.cpp *.cc *.hpp *.h ...) and .proto imports; an include
# that names a file next to the includer ("x.hpp", "../io/x.hpp") is resolved to its path in the tree first.
# Folders a rule names that do not exist are skipped. Links are read from CMake's own dependency graph
# (cmake --graphviz, re-run in the build folder, output in a temporary folder); "MPI" is any node whose name
# contains MPI::, libmpi, openmpi or mpich. Libraries a rule names that are not in the graph are skipped.
#
# Usage: scripts/check-layers.sh [--build-dir DIR] [--root DIR] [--no-links] [--list]
#   --build-dir DIR  a configured CMake build folder of this tree (default: build/ under the root)
#   --root DIR       the source tree to check (default: the folder above this script)
#   --no-links       check includes only (no CMake run)
#   --list           print the rules and exit
# Exit 0 and "layers: ok (N rules, M files)" when clean; exit 1 and one line per violation
# ("file:line: RULE: what"; a link names the target_link_libraries() call of its first step), then the text of
# each broken rule, otherwise; exit 2 on a usage or set-up error.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=
links=1
list=0
while (($#)); do
  case $1 in
    --build-dir) build_dir=${2:?--build-dir needs a folder}; shift 2 ;;
    --build-dir=*) build_dir=${1#*=}; shift ;;
    --root) root=$(cd "${2:?--root needs a folder}" && pwd); shift 2 ;;
    --root=*) root=$(cd "${1#*=}" && pwd); shift ;;
    --no-links) links=0; shift ;;
    --list) list=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "check-layers: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
build_dir=${build_dir:-$root/build}

graph=
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ((links && !list)); then
  if [[ ! -f $build_dir/CMakeCache.txt ]]; then
    echo "check-layers: $build_dir is not a configured CMake build folder (pass --build-dir, or --no-links)" >&2
    exit 2
  fi
  # Re-running CMake on a configured folder regenerates nothing that has not changed.
  if ! cmake --graphviz="$tmp/graph.dot" "$build_dir" >"$tmp/cmake.log" 2>&1; then
    cat "$tmp/cmake.log" >&2
    echo "check-layers: cmake --graphviz failed in $build_dir" >&2
    exit 2
  fi
  graph=$tmp/graph.dot
fi

exec python3 - "$root" "$graph" "$list" <<'PY'
import os, re, subprocess, sys
from collections import deque

root, graph, list_only = sys.argv[1], sys.argv[2], sys.argv[3] == "1"

# --- include rules: (id, text, applies(path), forbidden(include) -> bool) -------------------------------
def under(*prefixes):
    return lambda p: any(p.startswith(x) for x in prefixes)

def from_any(*prefixes, mpi=False):
    def bad(inc):
        return any(inc.startswith(x) for x in prefixes) or (mpi and os.path.basename(inc) == "mpi.h")
    return bad

def spec_bad(inc):
    if inc.startswith("models/"):
        return not inc.endswith("_params.hpp")
    return inc.startswith(("partition/", "io/"))

INCLUDE_RULES = [
    ("R1", "models/** includes nothing from jobs/, experiment/, partition/, io/, engine/kernel/, and never <mpi.h>.",
     under("models/"), from_any("jobs/", "experiment/", "partition/", "io/", "engine/kernel/", mpi=True)),
    ("R2", "engine/* (the model-facing API, top level only) includes nothing from engine/kernel/, models/, partition/, io/, jobs/, experiment/, and never <mpi.h>.",
     lambda p: p.startswith("engine/") and p.count("/") == 1,
     from_any("engine/kernel/", "models/", "partition/", "io/", "jobs/", "experiment/", mpi=True)),
    ("R3", "engine/kernel/** includes nothing from models/, partition/, io/, jobs/, experiment/.",
     under("engine/kernel/"), from_any("models/", "partition/", "io/", "jobs/", "experiment/")),
    ("R4", "partition/** and io/** include nothing from models/, jobs/, experiment/.",
     under("partition/", "io/"), from_any("models/", "jobs/", "experiment/")),
    ("R5", "experiment/** includes nothing from jobs/.",
     under("experiment/"), from_any("jobs/")),
    ("R6", "experiment/spec/** includes from models/ only *_params.hpp (plain parameter structs), and nothing from partition/ or io/.",
     under("experiment/spec/"), spec_bad),
    ("R7", "nothing outside jobs/ and tests/ includes jobs/.",
     lambda p: not p.startswith(("jobs/", "tests/")), from_any("jobs/")),
]

MODEL_LIBS = ["warpsim_models", "warpsim_cluster", "warpsim_workload", "warpsim_training", "warpsim_energy",
              "warpsim_reliability"]
MODEL_FORBIDDEN = ["warpsim_engine", "warpsim_spec", "warpsim_partition", "warpsim_io", "warpsim_hdf5",
                   "warpsim_experiment"]
LINK_RULES = [
    ("L1", "the model libraries (" + ", ".join(MODEL_LIBS) + ") do not link, directly or transitively, MPI, "
     + ", ".join(MODEL_FORBIDDEN[:-1]) + " or " + MODEL_FORBIDDEN[-1] + ".", MODEL_LIBS, True, MODEL_FORBIDDEN),
    ("L2", "warpsim_model_api does not link MPI, directly or transitively.", ["warpsim_model_api"], True, []),
]
RULES = [(r[0], r[1]) for r in INCLUDE_RULES] + [(r[0], r[1]) for r in LINK_RULES]

if list_only:
    for rid, text in RULES:
        print(f"{rid} {text}")
    sys.exit(0)

# --- files ---------------------------------------------------------------------------------------------
SOURCE_EXT = (".cpp", ".cc", ".cxx", ".hpp", ".hh", ".h", ".ipp", ".inl", ".proto")

def tree_files():
    try:
        top = subprocess.run(["git", "-C", root, "rev-parse", "--show-toplevel"], capture_output=True,
                             text=True, check=True).stdout.strip()
        if os.path.realpath(top) == os.path.realpath(root):
            out = subprocess.run(["git", "-C", root, "ls-files", "-z", "-co", "--exclude-standard"],
                                 capture_output=True, check=True).stdout.decode()
            return sorted({p for p in out.split("\0") if p.endswith(SOURCE_EXT)
                           and os.path.isfile(os.path.join(root, p))})
    except (OSError, subprocess.CalledProcessError):
        pass
    found = []
    for d, dirs, names in os.walk(root):
        dirs[:] = sorted(x for x in dirs if not x.startswith((".", "build"))
                         and not os.path.exists(os.path.join(d, x, "CMakeCache.txt")))
        for n in names:
            if n.endswith(SOURCE_EXT):
                found.append(os.path.relpath(os.path.join(d, n), root))
    return sorted(found)

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
IMPORT = re.compile(r'^\s*import\s+(?:public\s+|weak\s+)?"([^"]+)"\s*;')

def includes(path):
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield n, m.group(1), m.group(2)
            elif path.endswith(".proto"):
                m = IMPORT.match(line)
                if m:
                    yield n, '"', m.group(1)

def resolve(path, inc):
    """The include as a path in the tree when it names a file next to the includer, else as written."""
    local = os.path.normpath(os.path.join(os.path.dirname(path), inc))
    if not local.startswith("..") and os.path.isfile(os.path.join(root, local)) and local != inc:
        return local.replace(os.sep, "/")
    return os.path.normpath(inc).replace(os.sep, "/") if inc.startswith(".") else inc

files = tree_files()
violations = []
for path in files:
    rules = [r for r in INCLUDE_RULES if r[2](path)]
    if not rules:
        continue
    for n, delim, inc in includes(path):
        target = resolve(path, inc)
        shown = f"<{inc}>" if delim == "<" else f'"{inc}"'
        for rid, text, _, bad in rules:
            if bad(target):
                violations.append((rid, f"{path}:{n}: {rid}: includes {shown}"))

# --- link rules ------------------------------------------------------------------------------------------
MPI = re.compile(r"MPI::|libmpi|openmpi|mpich", re.I)

def cmake_link_site(target, dep):
    """file:line of the target_link_libraries() call of target that names dep (else the first one)."""
    first = None
    call = re.compile(r"target_link_libraries\s*\(\s*" + re.escape(target) + r"\b")
    for cm in [f for f in files_cmake()]:
        text = open(os.path.join(root, cm), encoding="utf-8", errors="replace").read()
        for m in call.finditer(text):
            end = text.find(")", m.end())
            line = text.count("\n", 0, m.start()) + 1
            site = f"{cm}:{line}"
            if re.search(r"(?<![\w:])" + re.escape(dep) + r"(?![\w:])", text[m.end():end]):
                return site
            first = first or site
    return first or "CMakeLists.txt:1"

_cmake_files = None
def files_cmake():
    global _cmake_files
    if _cmake_files is None:
        _cmake_files = []
        for d, dirs, names in os.walk(root):
            dirs[:] = sorted(x for x in dirs if not x.startswith((".", "build"))
                             and not os.path.exists(os.path.join(d, x, "CMakeCache.txt")))
            for n in sorted(names):
                if n == "CMakeLists.txt" or n.endswith(".cmake"):
                    _cmake_files.append(os.path.relpath(os.path.join(d, n), root))
    return _cmake_files

if graph:
    label, edges = {}, {}
    node_re = re.compile(r'^\s*"([^"]+)"\s*\[\s*label\s*=\s*"((?:[^"\\]|\\.)*)"')
    edge_re = re.compile(r'^\s*"([^"]+)"\s*->\s*"([^"]+)"')
    with open(graph, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = edge_re.match(line)
            if m:
                edges.setdefault(m.group(1), []).append(m.group(2))
                continue
            m = node_re.match(line)
            if m:
                label[m.group(1)] = m.group(2).replace('\\"', '"')
    by_name = {v: k for k, v in label.items()}
    for rid, text, libs, no_mpi, forbidden in LINK_RULES:
        for lib in libs:
            if lib not in by_name:
                continue
            # Breadth-first: the shortest path to each node reached from lib.
            start = by_name[lib]
            parent = {start: None}
            queue = deque([start])
            while queue:
                u = queue.popleft()
                for v in edges.get(u, []):
                    if v not in parent:
                        parent[v] = u
                        queue.append(v)
            def path_to(v):
                chain = []
                while v is not None:
                    chain.append(v)
                    v = parent[v]
                return [label.get(x, x) for x in reversed(chain)]
            hits = []
            for name in forbidden:
                if name in by_name and by_name[name] in parent:
                    hits.append(path_to(by_name[name]))
            if no_mpi:
                mpi_nodes = [v for v in parent if v != start and MPI.search(label.get(v, v))]
                if mpi_nodes:
                    hits.append(min((path_to(v) for v in mpi_nodes), key=len))
            for chain in hits:
                site = cmake_link_site(chain[0], chain[1])
                violations.append((rid, f"{site}: {rid}: links {' -> '.join(chain)}"))

for _, line in violations:
    print(line)
if violations:
    broken = {rid for rid, _ in violations}
    for rid, text in RULES:
        if rid in broken:
            print(f"  {rid} {text}")
    print(f"layers: FAILED, {len(violations)} violation(s) of {len(RULES)} rules in {len(files)} files")
    sys.exit(1)
checked = len(INCLUDE_RULES) + (len(LINK_RULES) if graph else 0)
print(f"layers: ok ({checked} rules, {len(files)} files)")
PY
