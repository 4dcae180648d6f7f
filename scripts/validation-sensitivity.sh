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
# or extended; default a temporary folder), TABLE_ONLY=1 (simulate nothing: the table from the runs in OUT,
# "not run" where one is missing). Each run is a full `warpsim validate` of the given rows.
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
  [[ -z ${TABLE_ONLY:-} ]] || { [[ $label != baseline ]] && return 0; echo "TABLE_ONLY: no baseline in $OUT" >&2; exit 1; }
  echo "sensitivity: $label ($(date -u +%H:%M:%S) UTC)" >&2
  # A failed row still writes its CSV line (exit 1); anything else is fatal.
  "$WARPSIM" --log-level warn validate "$@" "${VALIDATE_ARGS[@]}" --csv "$OUT/$label.csv.tmp" --overwrite \
    >"$OUT/$label.log" 2>&1 || { [[ -s "$OUT/$label.csv.tmp" ]] || { cat "$OUT/$label.log" >&2; exit 1; }; }
  mv "$OUT/$label.csv.tmp" "$OUT/$label.csv"
}

VALIDATE_ARGS=("$@")
# The arguments as a shell would need them (for the command the docs block names).
ARGS_TEXT=
for a in "$@"; do
  [[ $a =~ ^[A-Za-z0-9_./=:-]+$ ]] || a="'$a'"
  ARGS_TEXT+="${ARGS_TEXT:+ }$a"
done
run baseline
for p in $PARAMS; do
  for f in $FACTORS; do run "$p@$f" --perturb "$p=$f"; done
done

python3 - "$OUT" "$DOCS" "$PARAMS" "$FACTORS" "$ARGS_TEXT" <<'PY'
import csv, datetime, glob, os, sys
out, docs, params, factors, args = sys.argv[1:6]
params, raw = params.split(), factors.split()
factors = [float(f) for f in raw]
name_of = dict(zip(factors, raw))  # the run labels use the factors as given

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
fx = " / ".join(f"x{f:g}" for f in factors)
lines.append(f"| parameter | set | rows | MAE {fx} | mean signed error {fx} | worst row {fx} | "
             "d(mean error)/d(parameter %) |")
lines.append("|---|---|---|---|---|---|---|")
for s in sorted(base):
    b = stats(base[s])
    lines.append(f"| baseline (x1) | {s} | {b['n']} | {pct(b['mae'], False)} | {pct(b['mean'])} | "
                 f"{b['worst'][0]} {pct(b['worst'][1])} | |")
for p in params:
    for s in sorted(base):
        st = {}
        for f in factors:
            label = f"{p}@{name_of[f]}"
            st[f] = stats(load(label).get(s, [])) if os.path.exists(os.path.join(out, label + ".csv")) else None
        got = {f: v for f, v in st.items() if v}
        if not got:
            continue
        pts = dict(got)
        if len(pts) == 1:
            pts[1.0] = stats(base[s])
        lo, hi = min(pts), max(pts)
        slope = (pts[hi]['mean'] - pts[lo]['mean']) / ((hi - lo) * 100) * 100
        n = max(v['n'] for v in got.values())
        fail = sum(v['failed'] for v in got.values())
        cells = lambda k: " / ".join("not run" if st[f] is None else k(st[f]) for f in factors)
        lines.append(f"| {p} | {s} | {n}{' (' + str(fail) + ' failed)' if fail else ''} | " +
                     cells(lambda v: pct(v['mae'], False)) + " | " + cells(lambda v: pct(v['mean'])) + " | " +
                     cells(lambda v: f"{v['worst'][0]} {pct(v['worst'][1])}") + f" | {slope:+.3f} |")
table = "\n".join(lines) + "\n"
rows_text = "; ".join(f"{s}: {len(r)} rows ({', '.join(r)})" for s, r in sorted(rows_of.items()))
cmd = "scripts/validation-sensitivity.sh --docs docs/validation.md build/warpsim" + (" " + args if args else "")
env = []
if params != "gemm_eff sustained_clock hbm_eff kernel_gap nvlink_bw nic_bw collective_latency".split():
    env.append("PARAMS='" + " ".join(params) + "'")
if factors != [0.9, 1.1]:
    env.append("FACTORS='" + " ".join(f"{f:g}" for f in factors) + "'")
stamps = [os.path.getmtime(f) for f in glob.glob(os.path.join(out, "*.csv"))]
utc = lambda t: datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")
block = ("Generated by `" + " ".join(env + [cmd]) + "` (do not edit by hand: rerun the script); " +
         f"runs finished {utc(min(stamps))} to {utc(max(stamps))} UTC. Rows simulated: {rows_text}.\n\n" + table)
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
