#!/usr/bin/env bash
# Sensitivity of the validation sets to the main model parameters: reruns `warpsim validate` with each
# parameter moved by -10% and +10% and prints, per set, the mean absolute error (MAE) and the mean signed
# error of TFLOP/s per GPU, as the Markdown table of docs/validation.md ("Sensitivity").
#   scripts/validation-sensitivity.sh build/warpsim [validate arguments: SET..., --rows GLOB, --jobs K]
# Parameters: compute efficiency (job.compute_model.compute_eff_max, set from its default BASE_EFF = 0.80),
# per-kernel overhead (job.compute_model.op_overhead_us, from BASE_OVERHEAD_US = 4), and the network link
# bandwidth (every fat-tree tier's bandwidth_gbps scaled: NICs and switch links alike). When the compute
# model's defaults change, set BASE_EFF / BASE_OVERHEAD_US to the new ones. The GEMM efficiency is now per
# GPU profile and dtype (docs/gpu-profiles.md: A100 FP16 0.826, H100 BF16 0.681, H100 FP8 0.601), so BASE_EFF
# must be the value of the set's GPU and dtype: run one set at a time (BASE_EFF is required; there is no
# single default any more). ONLY=REGEX runs only the
# variants whose label matches (e.g. ONLY='baseline|op_overhead').
set -euo pipefail
WARPSIM=${1:?usage: $0 path/to/warpsim [validate arguments]}
shift
BASE_EFF=${BASE_EFF:?"set BASE_EFF to the sustained GEMM efficiency of the GPU and dtype of the set (docs/gpu-profiles.md)"}
BASE_OVERHEAD_US=${BASE_OVERHEAD_US:-4}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

times() { awk -v a="$1" -v f="$2" 'BEGIN { printf "%.6g", a * f }'; }

variants=(
  "baseline|"
  "compute_eff_max -10%|--set job.compute_model.compute_eff_max=$(times "$BASE_EFF" 0.9)"
  "compute_eff_max +10%|--set job.compute_model.compute_eff_max=$(times "$BASE_EFF" 1.1)"
  "link bandwidth -10%|--scale cluster.fat_tree.links.bandwidth_gbps=0.9"
  "link bandwidth +10%|--scale cluster.fat_tree.links.bandwidth_gbps=1.1"
  "op_overhead_us -10%|--set job.compute_model.op_overhead_us=$(times "$BASE_OVERHEAD_US" 0.9)"
  "op_overhead_us +10%|--set job.compute_model.op_overhead_us=$(times "$BASE_OVERHEAD_US" 1.1)"
)
echo "| parameter | set | rows | MAE | mean signed error |"
echo "|---|---|---|---|---|"
i=0
for v in "${variants[@]}"; do
  label=${v%%|*}
  flags=${v#*|}
  [[ -z ${ONLY:-} || $label =~ $ONLY ]] || { i=$((i + 1)); continue; }
  # shellcheck disable=SC2086 # flags are words
  "$WARPSIM" --log-level warn validate "$@" $flags --csv "$TMP/$i.csv" >"$TMP/$i.log" 2>&1 ||
    { [[ -s "$TMP/$i.csv" ]] || { cat "$TMP/$i.log" >&2; exit 1; }; }
  # CSV columns: set,row,name,config,reference,prediction,error,... (quoted fields hold no error column)
  python3 - "$TMP/$i.csv" "$label" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
sets = {}
for r in rows:
    if r["signed_relative_error"]:
        sets.setdefault(r["set"], []).append(float(r["signed_relative_error"]))
for s, e in sorted(sets.items()):
    mae = sum(abs(x) for x in e) / len(e)
    print(f"| {sys.argv[2]} | {s} | {len(e)} | {100*mae:.1f}% | {100*sum(e)/len(e):+.1f}% |")
PY
  i=$((i + 1))
done
