#!/usr/bin/env bash
# Mail queued in the sending process is delivered at once (wake(), no polling delay: the poll here
# is 30 s), and SIGTERM stops the workers gracefully: in-flight sends finish and are recorded,
# unstarted claims are given back, so a restart delivers the rest with no duplicate at all.
set -euo pipefail
source "$(dirname "$0")/outbox_lib.bash"

port=$(free_port)
start_server wake --port "$port"
db="$work/wake.db"
"$bench" outbox-queue --database "$db" --count 3 >/dev/null
out=$("$bench" outbox-run --database "$db" --smtp-url "smtp+plain://127.0.0.1:$port" --poll 30 --then-queue 5 --timeout 20 2>"$work/wake.err") \
  || { echo "$out"; tail "$work/wake.err"; fail "wake run"; }
grep -q "sent=8 dead=0" <<<"$out" || fail "wake: $out"
latency=$(sed -n 's/.*wake_latency_ms=\([0-9]*\).*/\1/p' <<<"$out")
[ -n "$latency" ] && [ "$latency" -lt 5000 ] || fail "in-process mail took ${latency:-?} ms with a 30 s poll"
echo "wake latency: ${latency} ms"

db="$work/stop.db"
"$bench" outbox-queue --database "$db" --count 2000 --to stop >/dev/null
"$bench" outbox-run --database "$db" --smtp-url "smtp+plain://127.0.0.1:$port" --workers 4 >"$work/stop.out" 2>"$work/stop.err" &
run=$!
pids+=("$run")
for _ in $(seq 600); do
  [ "$(ls "$work/wake/out" | grep -c -- "-stop")" -ge 300 ] && break
  sleep 0.05
done
kill -TERM "$run"
set +e
wait "$run"
code=$?
set -e
[ "$code" -eq 0 ] || { cat "$work/stop.out"; tail "$work/stop.err"; fail "graceful stop exited $code"; }
grep -q "terminated=1" "$work/stop.out" || fail "not stopped by the signal: $(cat "$work/stop.out")"
[ "$(sql "$db" "SELECT count(*) FROM outbox WHERE state = 'claimed'")" = 0 ] || fail "leases left behind"
sent=$(sql "$db" "SELECT count(*) FROM outbox WHERE state = 'sent'")
arrived=$(ls "$work/wake/out" | grep -c -- "-stop")
[ "$sent" -lt 2000 ] || fail "the stop came too late to test anything"
[ "$arrived" -eq "$sent" ] || fail "$arrived arrived but $sent recorded sent"
"$bench" outbox-run --database "$db" --smtp-url "smtp+plain://127.0.0.1:$port" --workers 4 --timeout 120 >"$work/rest.out" 2>/dev/null \
  || fail "restart: $(cat "$work/rest.out")"
grep -q "sent=2000 dead=0" "$work/rest.out" || fail "$(cat "$work/rest.out")"
"$python" - "$work/wake/out" <<'PY'
import collections, os, sys
per = collections.Counter(n.split("-", 1)[1] for n in os.listdir(sys.argv[1]) if "-stop" in n)
missing = [i for i in range(2000) if per[f"stop{i}@example.com.eml"] == 0]
dupes = {k: v for k, v in per.items() if v > 1}
assert not missing, missing[:5]
assert not dupes, dupes
print("all 2000 delivered across the graceful stop, no duplicates")
PY
echo "outbox wake and stop: ok"
