# The quick tier (`scripts/test.sh --quick`, ctest label `quick`) holds every unit test and one
# sequential-vs-parallel oracle per model. This check fails when a test that should be in it is not, e.g. a
# new gtest executable registered without the label. Usage: quick_tier.sh BUILD_DIR
set -euo pipefail
build=$1
listed=$(ctest --test-dir "$build" -N -L quick)
all=$(ctest --test-dir "$build" -N)
fail() { echo "FAIL: $*" >&2; exit 1; }
for oracle in oracle_np2 cluster_oracle_np2 lp_registry_np2 io_writer_np2 checkpoint_engine_np2 \
              training_run_oracle cli_phold_oracle_quick energy_worked_example_specs layers docs_commands; do
  grep -qE "Test +#[0-9]+: $oracle\$" <<<"$listed" || fail "quick tier lacks $oracle"
done
# Every GoogleTest case (Suite.Name) of the whole suite is in the quick tier.
missing=$(comm -23 <(grep -oE ': [A-Za-z0-9_]+\.[A-Za-z0-9_/]+$' <<<"$all" | sort) \
                   <(grep -oE ': [A-Za-z0-9_]+\.[A-Za-z0-9_/]+$' <<<"$listed" | sort))
[[ -z $missing ]] || fail "unit tests outside the quick tier:$(tr '\n' ' ' <<<"$missing")"
echo "quick tier: $(grep -cE 'Test +#' <<<"$listed") of $(grep -cE 'Test +#' <<<"$all") tests"
