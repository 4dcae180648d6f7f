# One spec for every subcommand (issue #25 item 2): the shipped experiment specs work with `estimate` and
# `collective --cluster`, a job spec works with `estimate`; JSON is told from text format by the content
# (first non-blank byte '{', after an optional UTF-8 byte-order mark), never by the file name; a directory or
# missing file and a spec of the wrong kind give one `warpsim: error:` line naming the path, exit 2.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/expect_exit2.sh"
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/warpsim-spec-input.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
SMALL=$ROOT/tests/io/training_small.textproto
JOB=$ROOT/models/workload/examples/megatron-1t-3072xa100.txtpb

# expect_ok NAME WANTED-TEXT COMMAND...: exit 0 and WANTED-TEXT on stdout.
expect_ok() {
  local name=$1 wanted=$2 out code=0
  shift 2
  out=$("$@" 2>&1) || code=$?
  [[ $code -eq 0 ]] && grep -qF -- "$wanted" <<<"$out" || fail "$name: exit $code, wanted '$wanted':
$out"
  echo "ok $name"
}

# estimate: the experiment specs users copy, and the job-only specs.
expect_ok estimate-experiment "job: gpt-6.7b" "$WARPSIM" estimate "$ROOT/examples/default.textproto"
expect_ok estimate-job "job: megatron-gpt-1t" "$WARPSIM" estimate "$JOB"

# The same job spec as JSON under a text-format name, and with a byte-order mark: detected by content.
printf '{"name": "json-job", "gpuType": "H100-SXM", "model": {"numLayers": 4, "hiddenSize": 1024, "ffnHiddenSize": 4096, "numAttentionHeads": 8, "seqLengthTokens": 1024, "vocabSize": 32000}, "training": {"globalBatchSequences": 8}}\n' >"$TMP/job.textproto"
expect_ok estimate-json-by-content "job: json-job" "$WARPSIM" estimate "$TMP/job.textproto"
printf '\xef\xbb\xbf' | cat - "$TMP/job.textproto" >"$TMP/job-bom.json"
expect_ok estimate-json-bom "job: json-job" "$WARPSIM" estimate "$TMP/job-bom.json"
printf '\xef\xbb\xbf' | cat - "$JOB" >"$TMP/job-bom.txtpb"
expect_ok estimate-text-bom "job: megatron-gpt-1t" "$WARPSIM" estimate "$TMP/job-bom.txtpb"
# An experiment spec in JSON with a byte-order mark (files resolved relative to it), for `run --check`.
printf '\xef\xbb\xbf  {"name": "bom-json", "clusterFile": "cluster.textproto", "jobFile": "job.json"}\n' \
  >"$TMP/experiment.textproto"
sed -n '/^cluster {/,/^}/p' "$SMALL" | sed '1d;$d' >"$TMP/cluster.textproto"
cp "$TMP/job.textproto" "$TMP/job.json"
sed -i 's/"globalBatchSequences": 8/"globalBatchSequences": 8}, "parallelism": {"dataParallel": 4/' "$TMP/job.json"
expect_ok run-check-json-bom "experiment: bom-json" "$WARPSIM" run "$TMP/experiment.textproto" --check

# collective --cluster takes the cluster of an experiment spec too.
expect_ok collective-experiment "1024" \
  "$WARPSIM" collective --cluster "$SMALL" --min-bytes 1KiB --max-bytes 1KiB --sync sequential

# Bad paths: one line naming the path, exit 2.
for cmd in run estimate cost "partition --ranks 2"; do
  expect_exit2 "${cmd%% *}-directory" "'$TMP': is a directory" "$WARPSIM" $cmd "$TMP"
  expect_exit2 "${cmd%% *}-missing" "'$TMP/none.textproto': cannot read" "$WARPSIM" $cmd "$TMP/none.textproto"
done
expect_exit2 collective-directory "'$TMP': is a directory" "$WARPSIM" collective --cluster "$TMP"
expect_exit2 sweep-directory "'$TMP': is a directory" "$WARPSIM" sweep "$TMP" --out "$TMP/out"
# A job spec where an experiment spec is needed names what it is and what is wanted.
expect_exit2 run-job-spec "is a job spec; this command needs an experiment spec" "$WARPSIM" run "$JOB"
expect_exit2 run-cluster-spec "is a cluster spec; this command needs an experiment spec" \
  "$WARPSIM" run "$TMP/cluster.textproto"
# Neither kind: the experiment spec's parse error.
printf 'no_such_field: 1\n' >"$TMP/bad.textproto"
expect_exit2 estimate-neither "neither an experiment spec nor a job spec" "$WARPSIM" estimate "$TMP/bad.textproto"
