# `warpsim serve --slurm`: an experiment submitted through the service becomes a Slurm job; the service
# reports its state until done and lists its result, which equals a local `warpsim run` of the same spec.
source "$(dirname "$0")/lib.sh"
small=$(cd "$(dirname "$0")/../jobs/sweep" && pwd)/small64.textproto
"$WARPSIM" serve --slurm --state "$work/state" --port 0 --port-file "$work/port" 2>"$work/serve.err" &
pid=$!
# lib.sh's exit trap, plus stopping the service by its PID whatever way the test ends.
trap 'rc=$?; kill "$pid" 2>/dev/null || true; if ((rc == 0)); then rm -rf "$work"; fi' EXIT
stop_service() { kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; }
for _ in $(seq 1 100); do [[ -s $work/port ]] && break; sleep 0.1; done
[[ -s $work/port ]] || { stop_service; fail "service did not start: $(cat "$work/serve.err")"; }
port=$(<"$work/port")
client() { "$WARPSIM" client --port "$port" "$@"; }
reply=$(client submit-experiment "$small") || { stop_service; fail "submit: $reply"; }
echo "$reply"
slurm_id=$(sed -n 's/.* slurm=\([0-9]*\).*/\1/p' <<<"$reply")
[[ $slurm_id =~ ^[0-9]+$ ]] || { stop_service; fail "no Slurm job id in the reply: $reply"; }
wait_completed "$slurm_id" >/dev/null
reply=$(client status j1)
echo "$reply"
grep -q 'state=done' <<<"$reply" || { stop_service; fail "service does not report done: $reply"; }
reply=$(client list)
want=$(run_local run "$small" --progress-seconds 0 | sed -n 's/^step seconds: //p')
grep -q "^result: j1 small64 done .*step_seconds=$want" <<<"$reply" ||
  { stop_service; fail "listed result differs from a local run (step seconds $want): $reply"; }
stop_service
echo "ok: experiment forwarded to Slurm as job $slurm_id, done, result equals a local run"
