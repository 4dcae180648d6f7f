# Bad `warpsim submit/status/cancel` input: a one-line error and exit code 2, before anything reaches Slurm.
set -euo pipefail
WARPSIM=${1:?usage: $0 path/to/warpsim}
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
expect_usage_error() {
  local err code=0
  err=$("$WARPSIM" "$@" 2>&1 >/dev/null) || code=$?
  [[ $code -eq 2 ]] || fail "'$*' exited $code, expected 2 (stderr: $err)"
  [[ $(grep -c '^warpsim: error: ' <<<"$err") -eq 1 && $(wc -l <<<"$err") -eq 1 ]] ||
    fail "'$*' did not print exactly one error line: $err"
  echo "ok '$*': $err"
}
expect_usage_error submit --dry-run --nodes 0 -- phold
expect_usage_error submit --dry-run --nodes x -- phold
expect_usage_error submit --dry-run --time 1:2:3:4 -- phold
expect_usage_error submit --dry-run --array-throttle 2 -- phold
expect_usage_error submit --dry-run -- phold --seed '{task}'
expect_usage_error submit --dry-run --launcher slurmrun -- phold
expect_usage_error submit --dry-run --launcher none --ntasks-per-node 2 -- phold
expect_usage_error submit --dry-run --job-name 'a b' -- phold
expect_usage_error submit --dry-run --
expect_usage_error submit --dry-run -- status 12
expect_usage_error submit --dry-run --config /nonexistent/slurm.cfg -- phold
expect_usage_error submit --dry-run --no-such-flag -- phold
expect_usage_error status 12x
expect_usage_error status 12 --wait -1
expect_usage_error cancel 'x;y'
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'nodes = 2\nfrobnicate = 1\n' >"$tmp/bad.cfg"
expect_usage_error submit --dry-run --config "$tmp/bad.cfg" -- phold
# A good config file is applied and flags override it.
printf '# site defaults\npartition = gpu\nnodes = 2\ntime = 1-00:00\n' >"$tmp/good.cfg"
script=$("$WARPSIM" submit --dry-run --config "$tmp/good.cfg" --nodes 3 -- phold --end-time 5)
grep -qx '#SBATCH --partition=gpu' <<<"$script" || fail "config partition not applied"
grep -qx '#SBATCH --nodes=3' <<<"$script" || fail "flag did not override config nodes"
grep -qx '#SBATCH --time=1-00:00' <<<"$script" || fail "config time not applied"
echo "ok config file applied, flags override it"
