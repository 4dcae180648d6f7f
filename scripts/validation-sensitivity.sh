#!/usr/bin/env bash
# Sensitivity of the validation sets to the main model parameters: reruns `warpsim validate` with each named
# parameter (`validate --perturb NAME=FACTOR`, experiment/validation/perturbation.hpp) multiplied by each
# factor, and prints per parameter and set the mean absolute error (MAE), the mean signed error and the worst
# row of TFLOP/s per GPU at each factor, and d(mean signed error)/d(parameter %): the change of the mean
# signed error, in percentage points, per 1% change of the parameter (from the lowest and highest factor
# run; with one factor, against the baseline).
#   scripts/validation-sensitivity.sh [--docs FILE] path/to/warpsim [validate arguments: SET..., --rows GLOB, --jobs K]
# --docs FILE rewrites the block between <!-- sensitivity:begin --> and <!-- sensitivity:end --> of FILE
# with the table, the command and what was simulated (docs/validation.md, "Sensitivity").
# Environment: PARAMS (names, default all that --perturb knows), FACTORS (default "0.9 1.1"), OUT (a folder
# that keeps each run's CSV and log; runs whose CSV is there are not rerun, so a long sweep can be resumed
# or extended; default a temporary folder). Each run is a full `warpsim validate` of the given rows.
set -euo pipefail
DOCS=
if [[ ${1:-} == --docs ]]; then
  DOCS=${2:?--docs needs a file}
  shift 2
fi
WARPSIM=${1:?usage: $0 [--docs FILE] path/to/warpsim [validate arguments]}
shift
PARAMS=${PARAMS:-gemm_eff sustained_clock hbm_eff kernel_gap nvlink_bw nic_bw collective_latency}
FACTORS=${FACTORS:-0.9 1.1}
if [[ -n ${OUT:-} ]]; then
  mkdir -p "$OUT"
else
  OUT=$(mktemp -d)
  trap 'rm -rf "$OUT"' EXIT
fi

run() {  # run LABEL [--perturb NAME=FACTOR]
  local label=$1
  shift
  [[ -s "$OUT/$label.csv" ]] && return 0
  echo "sensitivity: $label ($(date -u +%H:%M:%S) UTC)" >&2
  # A failed row still writes its CSV line (exit 1); anything else is fatal.
  "$WARPSIM" --log-level warn validate "$@" "${VALIDATE_ARGS[@]}" --csv "$OUT/$label.csv.tmp" --overwrite \
    >"$OUT/$label.log" 2>&1 || { [[ -s "$OUT/$label.csv.tmp" ]] || { cat "$OUT/$label.log" >&2; exit 1; }; }
  mv "$OUT/$label.csv.tmp" "$OUT/$label.csv"
}

VALIDATE_ARGS=("$@")
START=$(date -u +%Y-%m-%dT%H:%MZ)
run baseline
for p in $PARAMS; do
  for f in $FACTORS; do run "$p@$f" --perturb "$p=$f"; done
done

python3 - "$OUT" "$DOCS" "$START" "$PARAMS" "$FACTORS" "$*" <<'PY'
import csv, os, sys
out, docs, start, params, factors, args = sys.argv[1:7]
params, factors = params.split(), [float(f) for f in factors.split()]

def load(label):
    path = os.path.join(out, label + ".csv")
    sets = {}
    for r in csv.DictReader(open(path)):
        e = r["signed_relative_error"]
        sets.setdefault(r["set"], []).append((r["row"], float(e) if e else None))
    return sets

def stats(rows):
    errs = [e for _, e in rows if e is not None]
    failed = len(rows) - len(errs)
    if not errs:
        return None
    worst = max((r for r in rows if r[1] is not None), key=lambda r: abs(r[1]))
    return dict(n=len(errs), failed=failed, mae=sum(map(abs, errs)) / len(errs),
                mean=sum(errs) / len(errs), worst=worst)

def pct(x, signed=True):
    return f"{100 * x:+.1f}%" if signed else f"{100 * x:.1f}%"

base = load("baseline")
rows_of = {s: sorted(r for r, _ in rs) for s, rs in base.items()}
lines = []
head = "| parameter | set | rows | " + " | ".join(
    f"MAE x{f:g}" for f in factors) + " | " + " | ".join(
    f"mean signed error x{f:g}" for f in factors) + " | " + " | ".join(
    f"worst row x{f:g}" for f in factors) + " | d(mean error)/d(parameter %) |"
lines.append(head)
lines.append("|" + "---|" * (head.count("|") - 1))
for s in sorted(base):
    b = stats(base[s])
    lines.append(f"| baseline | {s} | {b['n']} | " + " | ".join([pct(b['mae'], False)] * len(factors)) + " | " +
                 " | ".join([pct(b['mean'])] * len(factors)) + " | " +
                 " | ".join([f"{b['worst'][0]} {pct(b['worst'][1])}"] * len(factors)) + " | |")
slopes = {}
for p in params:
    for s in sorted(base):
        st = {}
        for f in factors:
            label = f"{p}@{f:g}" if os.path.exists(os.path.join(out, f"{p}@{f:g}.csv")) else f"{p}@{f}"
            path = os.path.join(out, label + ".csv")
            st[f] = stats(load(label).get(s, [])) if os.path.exists(path) else None
        got = {f: v for f, v in st.items() if v}
        if not got:
            continue
        pts = dict(got)
        if len(pts) == 1:
            pts[1.0] = stats(base[s])
        lo, hi = min(pts), max(pts)
        slope = (pts[hi]['mean'] - pts[lo]['mean']) * 100 / ((hi - lo) * 100)
        slopes[(p, s)] = slope
        n = max(v['n'] for v in got.values())
        fail = sum(v['failed'] for v in got.values())
        cell = lambda f, k: ("not run" if st[f] is None else k(st[f]))
        lines.append(f"| {p} | {s} | {n}{' (' + str(fail) + ' failed)' if fail else ''} | " +
                     " | ".join(cell(f, lambda v: pct(v['mae'], False)) for f in factors) + " | " +
                     " | ".join(cell(f, lambda v: pct(v['mean'])) for f in factors) + " | " +
                     " | ".join(cell(f, lambda v: f"{v['worst'][0]} {pct(v['worst'][1])}") for f in factors) +
                     f" | {slope:+.3f} |")
table = "\n".join(lines) + "\n"
rows_text = "; ".join(f"{s}: {len(r)} rows ({', '.join(r)})" for s, r in sorted(rows_of.items()))
cmd = "scripts/validation-sensitivity.sh --docs docs/validation.md build/warpsim" + (" " + args if args else "")
env = []
if params != "gemm_eff sustained_clock hbm_eff kernel_gap nvlink_bw nic_bw collective_latency".split():
    env.append("PARAMS='" + " ".join(params) + "'")
if factors != [0.9, 1.1]:
    env.append("FACTORS='" + " ".join(f"{f:g}" for f in factors) + "'")
block = ("Generated by `" + " ".join(env + [cmd]) + "` (do not edit by hand: rerun the script), " +
         f"started {start}. Rows simulated: {rows_text}.\n\n" + table)
print(table, end="")
if docs:
    text = open(docs).read()
    b, e = "<!-- sensitivity:begin -->\n", "<!-- sensitivity:end -->"
    i, j = text.find(b), text.find(e)
    if i < 0 or j < i:
        sys.exit(f"--docs: {docs} has no {b.strip()} ... {e} block")
    tmp = docs + ".tmp"
    open(tmp, "w").write(text[:i + len(b)] + block + text[j:])
    os.replace(tmp, docs)
    print(f"docs: {docs}", file=sys.stderr)
PY
