#!/usr/bin/env bash
# `warpsim run` replaying Chakra execution traces (experiment spec chakra_trace, docs/workload.md):
#  1. ASTRA-sim's 8-NPU 1 MiB all-reduce (examples/chakra-allreduce-8npu.textproto) against the ring formula
#     on the modeled links;
#  2. the sync-mode oracle: sequential == conservative/optimistic on 1/2/4 ranks (summary, state digest and
#     the HDF5 /series /components /summary) for the all-reduce and the custom ring (send/recv + compute);
#     and a 4-rank PyTorch-shaped trace generated here with protoc (host ops and kernels out of id order,
#     c10d + NCCL nodes, process groups by pg_name, send/recv, a broadcast, rank_to_gpu across two nodes);
#  3. a real PyTorch trace from the Chakra project (tests/models/training/chakra/SOURCE.md) imports and runs;
#  4. malformed traces and unusable folders: one error line, exit code 2, also under mpiexec -np 2.
# Args: path/to/warpsim, the source root, protoc. The shared traces are ../shared/data/chakra beside the
# source root.
source "$(dirname "$0")/../../jobs/cli/lib.sh"
SRC=${2:?usage: $0 warpsim source-root protoc}
PROTOC=${3:-protoc}
DATA=$SRC/../shared/data/chakra
EXAMPLE=$SRC/examples/chakra-allreduce-8npu.textproto
here=$(cd "$(dirname "$0")" && pwd)
if [[ ! -d $DATA ]]; then
  echo "SKIP: shared Chakra traces not found at $DATA"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1. Closed form. The example's cluster: 8 single-GPU nodes on one leaf, 400 Gb/s links of 500 ns, a 100 ns
# switch, 100 ns NIC injection, 4096-byte store-and-forward packets. A ring all-reduce of B over n ranks is
# 2(n-1) steps, each moving B/n to the next rank over NIC -> leaf -> NIC:
#   T = 2(n-1) * (B/n / bw + alpha),  alpha = 2 * 500 + 100 + 100 ns + one packet's serialization at the leaf.
# The simulation adds what the formula leaves out (the first packet's serialization at the NIC, per-packet
# pipelining, the Wait between steps), so it may exceed T by a little: within 5%.
ref=$(run_np 1 run "$EXAMPLE" --sync sequential --progress-seconds 0)
makespan=$(value "makespan seconds" "$ref")
[[ $(value "replayed collectives" "$ref") == 8 ]] || fail "not 8 collectives replayed: $ref"
awk -v t="$makespan" 'BEGIN {
  n = 8; B = 1048576; bw = 400e9 / 8; alpha = (2 * 500 + 100 + 100) * 1e-9 + 4096 / bw;
  f = 2 * (n - 1) * (B / n / bw + alpha);
  printf "all-reduce 8 x 1 MiB: simulated %.3f us, ring formula %.3f us, ratio %.4f\n", t * 1e6, f * 1e6, t / f;
  exit (t >= f * 0.995 && t <= f * 1.05) ? 0 : 1 }' || fail "makespan $makespan s is not within 5% of the ring formula"

# 2. Oracle. Keys that describe the run's cost or configuration, not the simulated result.
volatile='^(sync|ranks|partition|events processed|events rolled back|efficiency|rollbacks|remote events|remote event fraction|event rate|wall seconds|peak rss bytes|peak rss bytes total|cpu share min|output [a-z ]*):'
summary() { grep -E '^[a-z].*: ' | grep -Ev "$volatile"; }
same_results() {
  local a=$1 b=$2 g
  for g in /series /components /summary; do
    h5diff "$a" "$b" "$g" "$g" >/dev/null || return 1
  done
}
sed "s|folder: \"[^\"]*\"|folder: \"$DATA/astra-sim_custom_ring_allreduce_8npus_1MB\"|" "$EXAMPLE" >"$tmp/ring.textproto"
grep -q custom_ring "$tmp/ring.textproto" || fail "ring spec rewrite did not apply"
source "$here/chakra_generate.sh"
for spec in "$EXAMPLE" "$tmp/ring.textproto" "$tmp/gen.textproto"; do
  name=$(basename "$spec")
  seq=$(run_np 1 run "$spec" --sync sequential --progress-seconds 0 --output "$tmp/seq.h5" --overwrite)
  want=$(summary <<<"$seq")
  grep -q '^events committed: [1-9]' <<<"$want" || fail "$name: no events committed"
  for case in "1 optimistic block" "2 optimistic round-robin" "2 conservative block" "4 optimistic block"; do
    read -r np sync part <<<"$case"
    out=$(run_np "$np" run "$spec" --sync "$sync" --partition "$part" --progress-seconds 0 --output "$tmp/run.h5" \
      --overwrite --output-layout single)
    got=$(summary <<<"$out")
    if [[ "$got" != "$want" ]]; then
      diff <(echo "$want") <(echo "$got") || true
      fail "$name $case: summary differs from sequential"
    fi
    same_results "$tmp/seq.h5" "$tmp/run.h5" || fail "$name $case: HDF5 contents differ from sequential"
    echo "ok $name $case: summary, digest and HDF5 identical to sequential"
  done
  echo "$want" | grep -E '^(makespan seconds|replayed [a-z]*|events committed|state digest):' | tr '\n' ' '
  echo
done
# The registry's tree all-reduce on the same trace: another makespan, the same under optimistic sync.
allreduce_spec() {  # ALGORITHM: the example with that all-reduce algorithm, its folder made absolute
  sed -e "s|folder: \"[^\"]*\"|folder: \"$DATA/astra-sim_all_reduce_8npus_1MB\"|" \
    -e "s|chakra_trace {|chakra_trace { allreduce_algorithm: \"$1\"|" "$EXAMPLE"
}
allreduce_spec tree >"$tmp/tree.textproto"
tree=$(run_np 1 run "$tmp/tree.textproto" --sync sequential --progress-seconds 0 | summary)
[[ $(value "makespan seconds" "$tree") != "$makespan" ]] || fail "tree all-reduce: same makespan as the ring"
[[ $(run_np 2 run "$tmp/tree.textproto" --sync optimistic --progress-seconds 0 | summary) == "$tree" ]] ||
  fail "tree all-reduce: optimistic on 2 ranks differs from sequential"
echo "ok tree all-reduce: makespan $(value "makespan seconds" "$tree") s (ring $makespan s), optimistic == sequential"
allreduce_spec hierarchical >"$tmp/hier.textproto"

ring=$(run_np 1 run "$tmp/ring.textproto" --sync sequential --progress-seconds 0)
[[ $(value "replayed sends" "$ring") == 112 && $(value "replayed receives" "$ring") == 112 ]] ||
  fail "custom ring: not 8 x 14 sends and receives: $ring"
[[ $(value "replayed compute nodes" "$ring") == 56 ]] || fail "custom ring: not 8 x 7 compute nodes"

# 3. The PyTorch trace: one rank of a real job (host and device ops, c10d and NCCL nodes, cycles closed by
# control deps, ctrl deps on nodes left out of the file).
mkdir "$tmp/pt"
tar -xzf "$here/chakra/feeder_tests_trace.tar.gz" -C "$tmp/pt"
sed -e "s|folder: \"[^\"]*\"|folder: \"$tmp/pt/tests/data\"|" -e 's/nodes: 8/nodes: 1/' "$EXAMPLE" >"$tmp/pt.textproto"
pt=$(run_np 1 run "$tmp/pt.textproto" --sync sequential --progress-seconds 0)
[[ $(value "trace nodes" "$pt") == 3664 ]] || fail "PyTorch trace: not 3664 nodes: $pt"
[[ $(value "skipped cpu nodes" "$pt") -gt 1000 ]] || fail "PyTorch trace: host ops not skipped"
[[ $(value "replayed compute nodes" "$pt") -gt 1000 ]] || fail "PyTorch trace: kernels not replayed"
[[ $(value "traces ordered by data deps only" "$pt") == 1 ]] || fail "PyTorch trace: control-dep cycle not seen"
echo "ok PyTorch trace:" $(grep -E '^(trace nodes|replayed compute nodes|replayed collectives|skipped [a-z ]*|makespan seconds):' <<<"$pt" | tr '\n' ' ')

# 4. Bad input: one line naming the file (and the byte offset for a malformed stream), exit code 2.
# Without mpiexec the error is the only line on stderr; under mpiexec -np 2 it is the only `warpsim: error:`
# line (mpiexec adds its own note on a non-zero exit) and no rank calls MPI_Abort.
expect_one_line() {  # NAME PATTERN NP ARGS...
  local name=$1 pattern=$2 np=$3 code=0 out err lines
  shift 3
  if [[ $np == 1 ]]; then
    out=$("$WARPSIM" "$@" 2>"$tmp/err") || code=$?
    lines=$(cat "$tmp/err")
  else
    out=$($MPIEXEC -np "$np" "$WARPSIM" "$@" 2>"$tmp/err") || code=$?
    lines=$(grep '^warpsim: ' "$tmp/err" || true)
    ! grep -q MPI_ABORT "$tmp/err" || fail "$name (np $np): MPI_Abort: $(cat "$tmp/err")"
  fi
  err=$(cat "$tmp/err")
  [[ $code -eq 2 ]] || fail "$name (np $np): exit $code, not 2: $err"
  [[ -z $out ]] || fail "$name (np $np): printed a report: $out"
  [[ $(grep -c . <<<"$lines") -eq 1 ]] || fail "$name (np $np): not one error line: $err"
  grep -Eq "^warpsim: error: .*$pattern" <<<"$lines" || fail "$name (np $np): '$lines' does not match '$pattern'"
  echo "ok $name (np $np): $lines"
}
bad() {  # makes $tmp/bad/ a copy of the all-reduce traces and a spec reading them
  rm -rf "$tmp/bad"
  cp -r "$DATA/astra-sim_all_reduce_8npus_1MB" "$tmp/bad"
  chmod -R u+w "$tmp/bad"
  sed "s|folder: \"[^\"]*\"|folder: \"$tmp/bad\"|" "$EXAMPLE" >"$tmp/bad.textproto"
}
bad
head -c 40 "$DATA/astra-sim_all_reduce_8npus_1MB/all_reduce.3.et" >"$tmp/bad/all_reduce.3.et"
for np in 1 2; do
  expect_one_line truncated "chakra trace .*/all_reduce\.3\.et: byte [0-9]+: .*truncated" $np run "$tmp/bad.textproto"
  expect_one_line "truncated --check" "all_reduce\.3\.et: byte [0-9]+" $np run "$tmp/bad.textproto" --check
done
bad
printf '\x00\x02\x0f\x01' >"$tmp/bad/all_reduce.5.et"
expect_one_line "undecodable node" "all_reduce\.5\.et: byte 1: cannot decode Node" 1 run "$tmp/bad.textproto"
bad
rm "$tmp/bad/all_reduce.6.et"
expect_one_line "missing rank" "chakra_trace.folder: 'all_reduce\.6\.et' is missing" 2 run "$tmp/bad.textproto"
bad
sed -i 's|chakra_trace {|chakra_trace { rank_to_gpu: [0, 1, 2, 3, 4, 5, 6, 6]|' "$tmp/bad.textproto"
expect_one_line "GPU used twice" "chakra_trace.rank_to_gpu: GPU 6 is given to ranks 6 and 7" 1 run "$tmp/bad.textproto"
expect_one_line "no hierarchical all-reduce" "chakra_trace.allreduce_algorithm: 'hierarchical' \\(expected one of ring, tree\\)" 1 run "$tmp/hier.textproto"
sed 's|chakra_trace {|chakra_trace { process_group { name: "x" ranks: [1, 1] }|' "$EXAMPLE" >"$tmp/dup.textproto"
expect_one_line "rank twice in a group" "chakra_trace.process_group.ranks: rank 1 twice in group 'x'" 1 run "$tmp/dup.textproto"
expect_one_line "estimate refuses a trace" "chakra_trace: this command needs a training job" 1 estimate "$EXAMPLE"
sed 's|chakra_trace {.*|chakra_trace { folder: "/nonexistent" }|' "$EXAMPLE" >"$tmp/nofolder.textproto"
expect_one_line "no folder" "chakra_trace.folder: '/nonexistent' is not a readable folder" 1 run "$tmp/nofolder.textproto"
echo "ok chakra replay"
