# A run killed mid-way (SIGKILL, no chance to clean up) leaves no file under the final name: the file is
# written as NAME.partial and renamed only after every rank closed it.
source "$(dirname "$0")/../jobs/cli/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Run warpsim directly (an MPI singleton): SIGKILL on mpiexec would orphan its ranks.
code=0
timeout -s KILL 4 "$WARPSIM" --log-level warn phold --lps-per-rank 4096 --end-time 100000000 \
  --sample-interval 1000 --output "$tmp/killed.h5" >/dev/null 2>&1 || code=$?
[[ $code -eq 137 ]] || fail "the long run was expected to be killed (exit 137), it exited $code"
[[ ! -e $tmp/killed.h5 ]] || fail "a killed run left a final-named file"
echo "ok killed run (exit $code) left no final-named file: $(ls -A "$tmp" | tr '\n' ' ')"

# Control: the same command given time to finish produces the file.
run_np 1 phold --lps-per-rank 64 --end-time 100 --sample-interval 10 --output "$tmp/done.h5" >/dev/null
[[ -f $tmp/done.h5 && ! -e $tmp/done.h5.partial ]] || fail "a finished run did not leave its file"
echo "ok finished run left done.h5"
