#!/usr/bin/env bash
# A checkpoint that is corrupt, truncated, incomplete or written for another run is refused with one clear
# error line and exit code 2, before anything is simulated; so are checkpoint flags without a directory.
set -euo pipefail
WARPSIM=$1
SPEC=$2
MPIEXEC=${WARPSIM_MPIEXEC:-mpiexec --oversubscribe --allow-run-as-root}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

source "$(dirname "$0")/../../../jobs/cli/expect_exit2.sh"

# A valid checkpoint to damage, from a 2-rank optimistic run.
$MPIEXEC -np 2 "$WARPSIM" run "$SPEC" --progress-seconds 0 --checkpoint-dir "$TMP/good" --checkpoint-at-ns 12000000 \
  --stop-at-checkpoint >/dev/null 2>&1 || [[ $? -eq 3 ]]
CKPT=$(ls -d "$TMP"/good/ckpt-*)
fresh() {  # fresh NAME: a copy of the good checkpoint to damage
  rm -rf "$TMP/$1"
  mkdir -p "$TMP/$1"
  cp -r "$CKPT" "$TMP/$1/"
  ls -d "$TMP/$1"/ckpt-*
}
resume2() { $MPIEXEC -np 2 "$WARPSIM" run "$1" --progress-seconds 0 --resume "$2"; }

# The good one resumes (control).
resume2 "$SPEC" "$TMP/good" >/dev/null 2>&1 || { echo "FAIL: the undamaged checkpoint does not resume"; exit 1; }
echo "ok undamaged checkpoint resumes"

c=$(fresh flipped)
size=$(stat -c %s "$c/rank-1.bin")
byte=$(od -An -tu1 -j $((size / 2)) -N1 "$c/rank-1.bin" | tr -d ' ')
printf "$(printf '\\%03o' $(((byte + 1) % 256)))" | dd of="$c/rank-1.bin" bs=1 seek=$((size / 2)) conv=notrunc status=none
expect_exit2 flipped_byte "rank-1.bin is corrupt" resume2 "$SPEC" "$TMP/flipped"

c=$(fresh truncated)
truncate -s -100 "$c/rank-0.bin"
expect_exit2 truncated "rank-0.bin is truncated" resume2 "$SPEC" "$TMP/truncated"

c=$(fresh missing)
rm "$c/rank-1.bin"
expect_exit2 missing_file "rank-1.bin is missing" resume2 "$SPEC" "$TMP/missing"

c=$(fresh manifest)
sed -i 's/^seed: 1$/seed: 2/' "$c/manifest"
expect_exit2 edited_manifest "manifest is corrupt" resume2 "$SPEC" "$TMP/manifest"

mkdir -p "$TMP/empty"
expect_exit2 no_checkpoint "no complete checkpoint" resume2 "$SPEC" "$TMP/empty"
# A checkpoint still being written (temporary name) is not complete.
mkdir -p "$TMP/partial" && cp -r "$CKPT" "$TMP/partial/.$(basename "$CKPT").tmp"
expect_exit2 partial_checkpoint "no complete checkpoint" resume2 "$SPEC" "$TMP/partial"

OTHER="$TMP/other.textproto"
sed 's/simulation { steps: 2 }/simulation { steps: 3 }/' "$SPEC" >"$OTHER"
expect_exit2 other_spec "spec hash is" resume2 "$OTHER" "$TMP/good"
expect_exit2 other_seed "seed is '1' in the checkpoint but '7' in this run" \
  $MPIEXEC -np 2 "$WARPSIM" run "$SPEC" --progress-seconds 0 --seed 7 --resume "$TMP/good"
expect_exit2 other_ranks "ranks is '2' in the checkpoint but '4' in this run" \
  $MPIEXEC -np 4 "$WARPSIM" run "$SPEC" --progress-seconds 0 --resume "$TMP/good"
expect_exit2 other_partition "partition is" \
  $MPIEXEC -np 2 "$WARPSIM" run "$SPEC" --progress-seconds 0 --partition round-robin --resume "$TMP/good"
expect_exit2 other_output "series interval ps is 'none' in the checkpoint" \
  $MPIEXEC -np 2 "$WARPSIM" run "$SPEC" --progress-seconds 0 --output "$TMP/x.h5" --resume "$TMP/good"

expect_exit2 at_without_dir "--checkpoint-at-ns needs --checkpoint-dir" "$WARPSIM" run "$SPEC" --checkpoint-at-ns 5
expect_exit2 resume_not_dir "--resume: '$TMP/nope' is not a directory" "$WARPSIM" run "$SPEC" --resume "$TMP/nope"
expect_exit2 negative_every "--checkpoint-every-seconds must be" \
  "$WARPSIM" run "$SPEC" --checkpoint-dir "$TMP/d" --checkpoint-every-seconds -1
