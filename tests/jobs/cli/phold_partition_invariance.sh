# Results depend only on the total LP count and the seed: 512 LPs on 1 rank == 256 x 2 == 128 x 4, in every
# sync mode and partition, including a rollback-heavy configuration.
source "$(dirname "$0")/lib.sh"

check() {
  local extra=("$@")
  local ref
  ref=$(run_np 1 phold --sync sequential --lps-per-rank 512 "${extra[@]}")
  local want_events want_digest
  want_events=$(value "events committed" "$ref")
  want_digest=$(value "state digest" "$ref")
  [[ -n $want_events && $want_events -gt 0 ]] || fail "sequential run committed nothing"
  for spec in "1 512" "2 256" "4 128"; do
    read -r np per <<<"$spec"
    for sync in conservative optimistic; do
      for part in block round-robin; do
        out=$(run_np "$np" phold --sync "$sync" --partition "$part" --lps-per-rank "$per" "${extra[@]}")
        got_events=$(value "events committed" "$out")
        got_digest=$(value "state digest" "$out")
        [[ $got_events == "$want_events" ]] || fail "$sync/$part np=$np: $got_events events, sequential $want_events"
        [[ $got_digest == "$want_digest" ]] || fail "$sync/$part np=$np: digest $got_digest, sequential $want_digest"
        echo "ok $sync/$part np=$np ${extra[*]}: $got_events events, digest $got_digest," \
          "rolled back $(value "events rolled back" "$out")"
      done
    done
  done
}

check --end-time 2000
check --end-time 200 --start-events 4 --lookahead 0.05 --remote 0.9 --poll-interval 1 --batch 4 --idle-sleep-us 20
# Time-based polling (what oversubscribed nodes get by default) changes only when messages are seen.
check --end-time 400 --remote 0.5 --poll-us 200

# Per-LP digests, not only the combined one, match between sequential and a 4-rank optimistic run.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run_np 1 phold --sync sequential --lps-per-rank 512 --end-time 500 --digest-file "$tmp/seq.txt" >/dev/null
run_np 4 phold --sync optimistic --lps-per-rank 128 --end-time 500 --digest-file "$tmp/opt.txt" >/dev/null
[[ $(wc -l <"$tmp/seq.txt") -eq 512 ]] || fail "digest file does not list 512 LPs"
cmp -s "$tmp/seq.txt" "$tmp/opt.txt" || fail "per-LP digests differ between sequential and optimistic"
echo "ok per-LP digests identical (512 LPs)"
