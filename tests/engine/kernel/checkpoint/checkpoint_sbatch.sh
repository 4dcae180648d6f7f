#!/usr/bin/env bash
# The batch script `warpsim submit --checkpoint-dir` renders, run by bash as Slurm would run it (no Slurm
# needed): USR1 to the batch shell (what --signal=B:USR1@N sends before the time limit) is passed on to
# warpsim, which writes a checkpoint and exits 3; the same script run again (a requeued job) finds the
# checkpoint, resumes, and ends with the per-LP digests and summary of an uninterrupted run.
set -euo pipefail
WARPSIM=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP"
ARGS=(phold --lps-per-rank 2048 --end-time 2500 --sync sequential --digest-file digests.txt)
"$WARPSIM" "${ARGS[@]}" --progress-seconds 0 >full.txt
mv digests.txt full.dig
"$WARPSIM" submit --dry-run --launcher none --checkpoint-dir ckpt -- "${ARGS[@]}" --progress-seconds 0.1 >job.sh
grep -q -- '--signal=B:USR1@' job.sh || { echo "FAIL: no USR1 directive in the script"; exit 1; }
grep -q -- '#SBATCH --requeue' job.sh || { echo "FAIL: the job is not requeueable"; exit 1; }

# First attempt: signalled once the simulation runs.
SLURM_JOB_ID=4242 bash job.sh >first.out 2>first.err &
pid=$!
waited=0
until grep -q 'progress:' first.err 2>/dev/null; do
  sleep 0.05
  waited=$((waited + 1))
  ((waited < 1200)) || { echo "FAIL: no progress line within 60 s"; kill "$pid"; exit 1; }
done
kill -USR1 "$pid"
code=0
wait "$pid" || code=$?
[[ $code -eq 3 ]] || { echo "FAIL: the first attempt exited $code, not 3"; cat first.err; exit 1; }
grep -q 'warpsim-slurm: USR1: time limit is near: asking warpsim for a checkpoint' first.err ||
  { echo "FAIL: the USR1 trap did not run"; exit 1; }
grep -q 'warpsim-slurm: stopped at a checkpoint in ckpt' first.err || { echo "FAIL: no checkpoint stop"; exit 1; }
ls ckpt/ckpt-*/manifest >/dev/null || { echo "FAIL: no complete checkpoint in ckpt/"; exit 1; }
[[ ! -e digests.txt ]] || { echo "FAIL: the stopped run wrote final results"; exit 1; }

# Second attempt (the requeued job): resumes and completes.
SLURM_JOB_ID=4242 SLURM_RESTART_COUNT=1 bash job.sh >second.out 2>second.err
grep -q -- '--resume ckpt' second.err || { echo "FAIL: the second attempt did not resume"; cat second.err; exit 1; }
cmp full.dig digests.txt || { echo "FAIL: per-LP digests differ from the uninterrupted run"; exit 1; }
for key in 'events committed' 'state digest'; do
  [[ $(grep "^$key:" full.txt) == "$(grep "^$key:" second.out)" ]] || { echo "FAIL: $key differs"; exit 1; }
done
echo "ok: stopped at $(sed -n 's/^checkpoint time: //p' first.out), resumed: $(grep -E '^(events committed|state digest):' second.out | tr '\n' ' ')"

# Submission options that cannot work are refused before anything is submitted (exit 2, one line).
refused() {  # refused WANTED-TEXT SUBMIT-ARGS...
  local wanted=$1 code=0 err
  shift
  err=$("$WARPSIM" submit --dry-run "$@" 2>&1 >/dev/null) || code=$?
  [[ $code -eq 2 ]] && grep -qF -- "$wanted" <<<"$err" && [[ $(wc -l <<<"$err") -eq 1 ]] ||
    { echo "FAIL: submit $*: exit $code, wanted '$wanted', got: $err"; exit 1; }
  echo "ok refused: $err"
}
refused "only for \`warpsim run\` and \`warpsim phold\`" --checkpoint-dir c -- inspect f.h5
refused "--resume is set by checkpoint-dir" --checkpoint-dir c -- run s.textproto --resume c
refused "--checkpoint-dir is set by checkpoint-dir" --checkpoint-dir c -- phold --checkpoint-dir=d
