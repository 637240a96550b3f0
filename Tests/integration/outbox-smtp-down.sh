#!/usr/bin/env bash
# The SMTP server is down when sending starts and comes up ${DOWN_SECONDS:-30} s later: every
# message is delivered exactly once after it returns, none is given up.
set -euo pipefail
source "$(dirname "$0")/outbox_lib.bash"

down=${DOWN_SECONDS:-30}
port=$(free_port)
db="$work/down.db"
"$bench" outbox-queue --database "$db" --count 50 >/dev/null
"$bench" outbox-run --database "$db" --smtp-url "smtp+plain://127.0.0.1:$port" --base-delay 1 --max-delay 4 --poll 0.2 \
  --timeout $((down + 60)) >"$work/run.out" 2>"$work/run.err" &
run=$!
pids+=("$run")
sleep "$down"
[ "$(sql "$db" "SELECT count(*) FROM outbox WHERE state IN ('sent', 'dead')")" = 0 ] || fail "finished while the server was down"
sql "$db" "SELECT last_reply FROM outbox WHERE attempts > 0 LIMIT 1" | grep -qi "connect" || fail "no connection failure recorded: $(sql "$db" "SELECT state, attempts, last_reply FROM outbox LIMIT 3")"
start_server up --port "$port"
wait "$run" || { cat "$work/run.out"; tail "$work/run.err"; fail "run"; }
grep -q "sent=50 dead=0" "$work/run.out" || fail "$(cat "$work/run.out")"
for i in $(seq 0 49); do
  n=$(delivered_count "$work/up/out" "user$i@example.com")
  [ "$n" -eq 1 ] || fail "user$i delivered $n times"
done
echo "outbox smtp down ${down}s: ok ($(cat "$work/run.out"))"
