#!/usr/bin/env bash
# Several jobs on one cluster (issue #26 item 1, docs/shared-clusters.md). Args: path/to/warpsim.
# (a) two identical jobs packed on the two halves of a non-blocking fat tree each get the step time the job
#     gets alone on the same GPUs, within 1%;
# (b) spread over an oversubscribed fat tree, both jobs are slower than the job alone on the same GPUs (their
#     cross-leaf traffic shares the leaves' up ports);
# (d) bad placements and job entries: exit 2, one error line naming the field.
set -euo pipefail
WARPSIM=$1
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cp "$DIR/job_tiny.textproto" "$TMP/"
key() { grep -E "^$1: " | head -1 | sed -E 's/^[^:]+: //'; }
run() { "$WARPSIM" run "$1" --sync sequential --progress-seconds 0; }

for case in nonblocking oversubscribed; do
  spec="$DIR/two_jobs_$case.textproto"
  grep -v 'name: "b"' "$spec" >"$TMP/alone_$case.textproto"
  both=$(run "$spec")
  alone=$(run "$TMP/alone_$case.textproto" | key "job a step seconds")
  a=$(key "job a step seconds" <<<"$both")
  b=$(key "job b step seconds" <<<"$both")
  echo "$case: alone $alone s, shared a $a s, b $b s; $(grep -E '^fabric leaf uplink' <<<"$both")"
  if [[ $case == nonblocking ]]; then
    awk -v x="$alone" -v a="$a" -v b="$b" 'BEGIN {
      d = (a > x ? a - x : x - a) / x; e = (b > x ? b - x : x - b) / x;
      if (d > 0.01 || e > 0.01) { print "FAIL: shared step differs from alone by more than 1%"; exit 1 } }'
  else
    awk -v x="$alone" -v a="$a" -v b="$b" 'BEGIN {
      if (!(a > x && b > x)) { print "FAIL: spread on the oversubscribed fabric did not slow both jobs"; exit 1 } }'
  fi
  echo "ok $case"
done

# A later start: job b starting at 50 ms on its own half ends at 50 ms + its 2 steps, with the same step.
sed 's/jobs { name: "b" job_file: "job_tiny.textproto" placement: "packed" }/jobs { name: "b" job_file: "job_tiny.textproto" placement: "packed" start_time_s: 0.05 }/' \
  "$DIR/two_jobs_nonblocking.textproto" >"$TMP/late.textproto"
late=$(run "$TMP/late.textproto")
awk -v a="$(key "job a step seconds" <<<"$late")" -v b="$(key "job b step seconds" <<<"$late")" \
  -v m="$(key "makespan seconds" <<<"$late")" 'BEGIN {
    if (a != b || (m - (0.05 + 2 * b)) ^ 2 > 1e-11) { print "FAIL: late start: a " a " b " b " makespan " m; exit 1 } }'
echo "ok late start: makespan $(key "makespan seconds" <<<"$late") s"

SPEC="$DIR/two_jobs_nonblocking.textproto"
source "$DIR/../../jobs/cli/expect_spec_error.sh"
expect unknown_policy 'jobs\[1\].placement' 's/name: "b" job_file: "job_tiny.textproto" placement: "packed"/name: "b" job_file: "job_tiny.textproto" placement: "scattered"/'
expect too_few_gpus 'jobs\[2\].placement' 's/name: "b" job_file: "job_tiny.textproto" placement: "packed"/name: "b" job_file: "job_tiny.textproto" placement: "packed" }\njobs { name: "c" job_file: "job_tiny.textproto" placement: "spread"/; s/jobs { name: "a" job_file: "job_tiny.textproto" placement: "packed" }/jobs { name: "a" job_file: "job_tiny.textproto" placement: "explicit" gpus: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] }/; s/placement: "spread"/placement: "topology"/'
expect overlap 'jobs\[1\].gpus' 's/name: "b" job_file: "job_tiny.textproto" placement: "packed"/name: "b" job_file: "job_tiny.textproto" placement: "explicit" gpus: [15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30]/'
expect gpu_out_of_range 'jobs\[1\].gpus' 's/name: "b" job_file: "job_tiny.textproto" placement: "packed"/name: "b" job_file: "job_tiny.textproto" placement: "explicit" gpus: [16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 99]/'
expect gpus_count 'jobs\[1\].gpus' 's/name: "b" job_file: "job_tiny.textproto" placement: "packed"/name: "b" job_file: "job_tiny.textproto" placement: "explicit" gpus: [16, 17]/'
expect gpus_without_explicit 'jobs\[1\].gpus' 's/name: "b" job_file: "job_tiny.textproto" placement: "packed"/name: "b" job_file: "job_tiny.textproto" placement: "packed" gpus: [16]/'
expect duplicate_name 'jobs\[1\].name' 's/name: "b"/name: "a"/'
expect negative_start 'jobs\[1\].start_time_s' 's/name: "b" job_file: "job_tiny.textproto"/name: "b" job_file: "job_tiny.textproto" start_time_s: -1/'
expect job_and_jobs 'jobs' 's/^simulation/job_file: "job_tiny.textproto"\nsimulation/'
# Sweeps vary a job's placement through the repeated field's index (jobs.1.placement).
rows=$("$WARPSIM" sweep "$DIR/placement_sweep.textproto" --out "$TMP/sweep" --list | grep -c 'jobs.1.placement=')
[[ $rows -eq 3 ]] || { echo "FAIL: the placement sweep lists $rows experiments, expected 3"; exit 1; }
echo "ok placement sweep: 3 experiments"
