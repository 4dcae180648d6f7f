# Fuzz test of the input readers (issue #25). Makes the seed series file with a short PHOLD run, runs the
# in-process fuzz driver (reader_fuzz_test.cpp: thousands of mutated specs, Chakra traces and HDF5 files),
# then a few dozen mutated inputs through the binary itself: each must exit 0 or 2 and print at most one
# line on stderr (a signal, an abort or an MPI_ABORT banner fails). Usage: reader_fuzz.sh WARPSIM FUZZ-DRIVER
source "$(dirname "$0")/../jobs/cli/lib.sh"
DRIVER=${2:?usage: $0 warpsim reader_fuzz_tests}
SOURCE_DIR=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
start=$SECONDS

"$WARPSIM" --log-level warn phold --lps-per-rank 16 --end-time 200 --sync sequential --sample-interval 50 \
  --output "$tmp/seed.h5" >/dev/null
WARPSIM_FUZZ_H5="$tmp/seed.h5" "$DRIVER" --gtest_brief=1 || fail "the in-process fuzz driver failed"
echo "in-process: $((SECONDS - start)) s"

# mutate SEED IN OUT: deterministic byte edits (flips, a truncation or a number made extreme) with od/dd only.
mutate() {
  local seed=$1 in=$2 out=$3 size
  cp "$in" "$out"
  chmod u+w "$out"
  size=$(stat -c %s "$in")
  RANDOM=$seed
  local modes=3
  [[ $in == *.h5 ]] && modes=2  # no number rewriting in a binary file
  case $((seed % modes)) in
    0) head -c $(((RANDOM * 32768 + RANDOM) % size)) "$in" >"$out" ;;  # truncation
    1) for _ in 1 2 3 4; do
         printf "\\x$(printf %02x $((RANDOM % 256)))" |
           dd of="$out" bs=1 seek=$(((RANDOM * 32768 + RANDOM) % size)) conv=notrunc 2>/dev/null
       done ;;
    2) grep -q '[0-9]' "$in" || return 0
       local numbers=(0 4294967295 4294967296 -1 99999999999999999999 1e308)
       local n=$(grep -o '[0-9][0-9]*' "$in" | wc -l)
       local k=$((RANDOM % n + 1))
       awk -v k="$k" -v v="${numbers[RANDOM % 6]}" '{
         out = ""; line = $0
         while (match(line, /[0-9]+/)) {
           ++seen
           out = out substr(line, 1, RSTART - 1) (seen == k ? v : substr(line, RSTART, RLENGTH))
           line = substr(line, RSTART + RLENGTH)
         }
         print out line }' "$in" >"$out" ;;
  esac
}

# check NAME ARGS...: exit 0 or 2 and at most one stderr line.
cases=0
check() {
  local name=$1 err code=0
  shift
  err=$("$WARPSIM" "$@" 2>&1 >/dev/null) || code=$?
  [[ $code -eq 0 || $code -eq 2 ]] || fail "$name: exit $code (stderr: $err)"
  [[ $(grep -c . <<<"$err") -le 1 ]] || fail "$name: $(grep -c . <<<"$err") stderr lines: $err"
  cases=$((cases + 1))
}

for seed in $(seq 1 12); do
  mutate "$seed" "$tmp/seed.h5" "$tmp/m$seed.h5"
  check "inspect case $seed" inspect "$tmp/m$seed.h5" --trace "$tmp/m$seed.json"
done
specs=("$SOURCE_DIR/examples/default.textproto" "$SOURCE_DIR/examples/moe-512xh100.textproto")
for seed in $(seq 1 12); do
  spec=${specs[seed % 2]}
  mutate "$seed" "$spec" "$tmp/s$seed.textproto"
  check "run --check case $seed ($(basename "$spec"))" run --check "$tmp/s$seed.textproto"
done
job=$SOURCE_DIR/models/workload/examples/megatron-1t-3072xa100.txtpb
for seed in $(seq 1 6); do
  mutate "$seed" "$job" "$tmp/j$seed.txtpb"
  check "estimate case $seed" estimate "$tmp/j$seed.txtpb"
done
echo "ok: $cases CLI cases, $((SECONDS - start)) s in all"
