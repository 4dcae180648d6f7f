# Shared nodes (docs/running.md, "Shared nodes"; jobs/cli/simulating_ranks.hpp): with the node's CPUs kept
# busy by other processes, 2 ranks of `phold`, `run` and `collective` with `--shared-node shrink` (the
# default outside the test suite, which sets keep) simulate on 1 rank, warn once, give the sequential run's
# results, and exit with the run's exit code on every rank, bad input included; `--shared-node keep` still
# simulates on 2 ranks. Not a timing test: it checks which ranks simulate, from the report. Busy loops fill
# all CPUs but one for a few seconds.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/expect_exit2.sh"

tmp=$(mktemp -d)
hogs=()
cleanup() {
  for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

seq=$(run_np 1 phold --sync sequential --lps-per-rank 512 --end-time 300 --digest-file "$tmp/seq.txt")

# Leave less than one whole CPU free for 2 ranks: nproc - 1 busy loops (bounded, in case the trap is missed).
cpus=$(nproc)
for ((i = 0; i < cpus - 1 || i < 1; i++)); do
  timeout 120 bash -c 'while :; do :; done' &
  hogs+=($!)
done
sleep 0.5

out=$($MPIEXEC -np 2 "$WARPSIM" --log-level warn phold --shared-node shrink --lps-per-rank 256 --end-time 300 \
  --digest-file "$tmp/shrink.txt" 2>"$tmp/shrink.err")
[[ $(value ranks "$out") == 1 ]] || fail "shrink on a busy node: $(value ranks "$out") ranks simulated, wanted 1"
[[ $(value lps "$out") == 512 ]] || fail "shrink changed the model: $(value lps "$out") LPs, wanted 512 (2 x 256)"
[[ $(value "state digest" "$out") == "$(value "state digest" "$seq")" ]] || fail "shrink: state digest differs"
cmp -s "$tmp/seq.txt" "$tmp/shrink.txt" || fail "shrink: per-LP digests differ from the sequential run"
[[ $(grep -c "1 of 2 ranks simulate" "$tmp/shrink.err") -eq 1 ]] ||
  fail "shrink: wanted one warning naming '1 of 2 ranks simulate', stderr was: $(cat "$tmp/shrink.err")"
echo "ok shrink: 1 of 2 ranks simulated, digest $(value "state digest" "$out") as sequential"

out=$($MPIEXEC -np 2 "$WARPSIM" --log-level warn phold --shared-node keep --lps-per-rank 256 --end-time 300 \
  --digest-file "$tmp/keep.txt")
[[ $(value ranks "$out") == 2 ]] || fail "keep: $(value ranks "$out") ranks simulated, wanted 2"
cmp -s "$tmp/seq.txt" "$tmp/keep.txt" || fail "keep: per-LP digests differ from the sequential run"
echo "ok keep: 2 ranks simulated, same digests"

# `warpsim collective` shrinks alike and prints the ranks that simulated in its header.
root=$(cd "$(dirname "$0")/../../.." && pwd)
coll=(collective --cluster "$root/examples/clusters/fat_tree_2tier_16gpu.textproto" --min-bytes 1KiB --max-bytes 4KiB)
c1=$(run_np 1 "${coll[@]}" --sync sequential)
c2=$($MPIEXEC -np 2 "$WARPSIM" --log-level warn "${coll[@]}" --shared-node shrink 2>/dev/null)
grep -q "ranks 1$" <<<"$(sed -n 1p <<<"$c2")" || fail "collective shrink: header does not say ranks 1: $(sed -n 1p <<<"$c2")"
[[ $(awk '!/^#/ {print $1, $6}' <<<"$c2") == "$(awk '!/^#/ {print $1, $6}' <<<"$c1")" ]] ||
  fail "collective shrink: per-size digests differ from the sequential run"
echo "ok collective shrink: 1 of 2 ranks simulated, per-size digests as sequential"

# The waiting rank exits with the run's code: bad input found by the simulating rank is exit 2 everywhere.
expect_exit2 shrink_bad_input "--end-time" $MPIEXEC -np 2 "$WARPSIM" phold --shared-node shrink --end-time -1
expect_exit2 shrink_bad_policy "--shared-node" $MPIEXEC -np 2 "$WARPSIM" phold --shared-node maybe
expect_exit2 shrink_bad_env "WARPSIM_SHARED_NODE" env WARPSIM_SHARED_NODE=maybe "$WARPSIM" phold

# A training run on the shrunken ranks gives the sequential summary.
spec="$(dirname "$0")/../../models/training/small.textproto"
if [[ -f $spec ]]; then
  s=$(run_np 1 run --sync sequential --progress-seconds 0 "$spec")
  p=$($MPIEXEC -np 2 "$WARPSIM" --log-level warn run --shared-node shrink --progress-seconds 0 "$spec" 2>/dev/null)
  [[ $(value ranks "$p") == 1 ]] || fail "run shrink: $(value ranks "$p") ranks simulated, wanted 1"
  [[ $(value "state digest" "$p") == "$(value "state digest" "$s")" ]] || fail "run shrink: digest differs"
  echo "ok run shrink: 1 rank, digest $(value "state digest" "$p") as sequential"
fi
