# `warpsim serve` and `warpsim client` as users run them: start on loopback with an ephemeral port, submit
# the 64-GPU experiment, poll status to done, list its result, refuse an unknown id; refuse to bind beyond
# loopback without a 0600 token file (exit 2); submit a sweep whose base is a file (the client inlines it);
# restart the service on the same state folder: history and results kept, ids continue; stop it by its PID.
set -euo pipefail
WARPSIM=${1:?usage: $0 path/to/warpsim}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/warpsim-serve-cli.XXXXXX")
pid=
cleanup() {
  rc=$?
  [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  if ((rc == 0)); then rm -rf "$work"; else echo "work dir kept: $work" >&2; fi
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  cat "$work/serve.err" >&2 || true
  exit 1
}

rc=0
"$WARPSIM" serve --bind 0.0.0.0 --state "$work/s0" 2>"$work/err0" || rc=$?
((rc == 2)) && grep -q "a --token-file (mode 0600) is required" "$work/err0" || fail "bind 0.0.0.0 without token: exit $rc"
head -c 24 /dev/urandom | base64 >"$work/token" && chmod 644 "$work/token"
rc=0
"$WARPSIM" serve --bind 0.0.0.0 --token-file "$work/token" --state "$work/s0" 2>"$work/err1" || rc=$?
((rc == 2)) && grep -q "has mode 0644" "$work/err1" || fail "0644 token file: exit $rc $(cat "$work/err1")"
echo "ok: refuses to bind beyond loopback without a private token file"

"$WARPSIM" serve --state "$work/state" --port 0 --port-file "$work/port" 2>"$work/serve.err" &
pid=$!
for _ in $(seq 1 100); do [[ -s $work/port ]] && break; sleep 0.1; done
[[ -s $work/port ]] || fail "no port file"
port=$(<"$work/port")
client() { "$WARPSIM" client --port "$port" "$@"; }
reply=$(client submit-experiment "$here/../sweep/small64.textproto") || fail "submit: $reply"
grep -q '^job: j1 kind=experiment' <<<"$reply" || fail "submit reply: $reply"
for _ in $(seq 1 300); do
  reply=$(client status j1) || fail "status: $reply"
  grep -q 'state=\(queued\|running\)' <<<"$reply" || break
  sleep 0.2
done
grep -q 'state=done exit=0' <<<"$reply" || fail "j1 did not finish: $reply"
reply=$(client list) || fail "list: $reply"
grep -q '^result: j1 small64 done .*step_seconds=0\.' <<<"$reply" || fail "list: $reply"
rc=0
reply=$(client cancel j42) || rc=$?
((rc == 1)) && grep -q 'error: cancel.id: no job j42' <<<"$reply" || fail "cancel of an unknown job: $rc $reply"
kill -0 "$pid" || fail "the service died"
echo "ok: submit, status, list and a refused cancel through warpsim client"

wait_for() {  # job id: polls status until the job leaves queued/running
  for _ in $(seq 1 300); do
    reply=$(client status "$1") || fail "status $1: $reply"
    grep -q 'state=\(queued\|running\)' <<<"$reply" || break
    sleep 0.2
  done
}
mkdir -p "$work/base" "$work/sweeps"
cp "$here/../sweep/small64.textproto" "$work/base/"
cat >"$work/sweeps/s.textproto" <<'EOF2'
name: "s"
base_file: "../base/small64.textproto"
axes { path: "simulation.seed" values: ["1", "2"] }
EOF2
reply=$(cd / && client submit-sweep "$work/sweeps/s.textproto" --jobs 2) || fail "submit-sweep with base_file: $reply"
grep -q '^job: j2 kind=sweep' <<<"$reply" || fail "submit-sweep reply: $reply"
wait_for j2
grep -q 'state=done exit=0' <<<"$reply" || fail "j2 did not finish: $reply"
reply=$(client list) || fail "list: $reply"
grep -q '^result: j2 s-0 done' <<<"$reply" && grep -q '^result: j2 s-1 done' <<<"$reply" || fail "list: $reply"
printf 'base_file: "nope.textproto"\n' >"$work/sweeps/missing.textproto"
rc=0
client submit-sweep "$work/sweeps/missing.textproto" 2>"$work/err2" || rc=$?
((rc == 2)) && grep -q "^warpsim: error: submit-sweep: base_file: cannot read '$work/sweeps/nope.textproto'" "$work/err2" ||
  fail "missing base_file: exit $rc $(cat "$work/err2")"
echo "ok: submit-sweep inlines a base_file; a missing one is one error line, exit 2"

j1_summary=$(cat "$work/state/jobs/j1/stdout.txt")
kill "$pid" && wait "$pid" 2>/dev/null || true
rm -f "$work/port"
"$WARPSIM" serve --state "$work/state" --port 0 --port-file "$work/port" 2>>"$work/serve.err" &
pid=$!
for _ in $(seq 1 100); do [[ -s $work/port ]] && break; sleep 0.1; done
[[ -s $work/port ]] || fail "no port file after the restart"
port=$(<"$work/port")
reply=$(client status) || fail "status after the restart: $reply"
grep -q '^job: j1 kind=experiment state=done exit=0' <<<"$reply" && grep -q '^job: j2 kind=sweep state=done' <<<"$reply" ||
  fail "status after the restart: $reply"
reply=$(client list) || fail "list after the restart: $reply"
grep -q '^result: j1 small64 done' <<<"$reply" && grep -q '^result: j2 s-1 done' <<<"$reply" || fail "list after the restart: $reply"
reply=$(client submit-experiment "$here/../sweep/small64.textproto") || fail "submit after the restart: $reply"
grep -q '^job: j3 kind=experiment' <<<"$reply" || fail "the id after a restart: $reply"
wait_for j3
grep -q 'state=done exit=0' <<<"$reply" || fail "j3 did not finish: $reply"
[[ $(cat "$work/state/jobs/j1/stdout.txt") == "$j1_summary" ]] || fail "j1's summary changed"
echo "ok: a restart on the same --state keeps jobs and results; ids continue (j3)"
