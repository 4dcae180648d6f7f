# The quick tier's PHOLD oracle (scripts/test.sh --quick): sequential on 1 rank == optimistic on 2 ranks, the
# same 256 LPs and seed, by committed events, the combined digest and every per-LP digest. The full matrix of
# sync modes, partitions and rank counts is cli_phold_partition_invariance (whole suite only).
source "$(dirname "$0")/lib.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
seq=$(run_np 1 phold --sync sequential --lps-per-rank 256 --end-time 500 --digest-file "$tmp/seq.txt")
opt=$(run_np 2 phold --sync optimistic --lps-per-rank 128 --end-time 500 --digest-file "$tmp/opt.txt")
events=$(value "events committed" "$seq")
[[ -n $events && $events -gt 0 ]] || fail "sequential run committed nothing"
[[ $(value "events committed" "$opt") == "$events" ]] || fail "optimistic committed $(value "events committed" "$opt"), sequential $events"
[[ $(value "state digest" "$opt") == "$(value "state digest" "$seq")" ]] || fail "state digests differ"
[[ $(wc -l <"$tmp/seq.txt") -eq 256 ]] || fail "digest file does not list 256 LPs"
cmp -s "$tmp/seq.txt" "$tmp/opt.txt" || fail "per-LP digests differ between sequential and optimistic"
echo "ok phold sequential == optimistic np=2: $events events, digest $(value "state digest" "$seq")"
