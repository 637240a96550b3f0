#!/usr/bin/env bash
# kill -9 of the sending process with 2,000 messages queued, on the default 150 s lease: after a
# restart every message is delivered, no more are delivered twice than three per worker (a worker
# completes no message while three records before it are uncommitted), and the last one leaves
# within 15 s of the restart — the restarted pool finds the dead process's heartbeat, sees its pid
# gone and takes its claims back at once instead of waiting out their leases.
set -euo pipefail
source "$(dirname "$0")/outbox_lib.bash"

workers=4
port=$(free_port)
start_server kill --port "$port"
db="$work/kill.db"
"$bench" outbox-queue --database "$db" --count 2000 >/dev/null
"$bench" outbox-run --database "$db" --smtp-url "smtp+plain://127.0.0.1:$port" --workers "$workers" \
  >"$work/first.out" 2>"$work/first.err" &
first=$!
pids+=("$first")
for _ in $(seq 600); do
  [ "$(ls "$work/kill/out" 2>/dev/null | wc -l)" -ge 400 ] && break
  sleep 0.05
done
kill -9 "$first"
wait "$first" 2>/dev/null || true
at_kill=$(ls "$work/kill/out" | wc -l)
unfinished=$(sql "$db" "SELECT count(*) FROM outbox WHERE state NOT IN ('sent', 'dead')")
claimed=$(sql "$db" "SELECT count(*) FROM outbox WHERE state = 'claimed'")
beats=$(sql "$db" "SELECT count(*) FROM daemon_heartbeats")
echo "killed after $at_kill deliveries; $unfinished unfinished, $claimed claimed by the dead process, $beats heartbeat left"
[ "$unfinished" -gt 0 ] || fail "the kill came too late to test anything"
[ "$claimed" -gt 0 ] || fail "the dead process held no claims: nothing to take back"
[ "$beats" -eq 1 ] || fail "the dead process left $beats heartbeat rows, not 1"

restarted=$("$python" -c 'import time; print(time.time())')
"$bench" outbox-run --database "$db" --smtp-url "smtp+plain://127.0.0.1:$port" --workers "$workers" \
  --timeout 300 >"$work/second.out" 2>"$work/second.err" || { cat "$work/second.out"; tail "$work/second.err"; fail "restart"; }
grep -q "sent=2000 dead=0" "$work/second.out" || fail "$(cat "$work/second.out")"
grep "took back the claims" "$work/second.err" || fail "the restart logged no claims taken back"
beats=$(sql "$db" "SELECT count(*) FROM daemon_heartbeats")
[ "$beats" -eq 0 ] || fail "$beats heartbeat rows left after a graceful stop"
"$python" - "$work/kill/out" "$workers" "$restarted" <<'PY'
import collections, os, sys
names = os.listdir(sys.argv[1])
last = max(os.stat(os.path.join(sys.argv[1], name)).st_mtime for name in names)
after = last - float(sys.argv[3])
print(f"restart to last delivery: {after:.2f} s")
assert after <= 60, f"the last mail left {after:.2f} s after the restart (limit 60 s, against a lease of 150 s)"
per = collections.Counter(name.split("-", 1)[1] for name in names)
missing = [f"user{i}@example.com.eml" for i in range(2000) if per[f"user{i}@example.com.eml"] == 0]
duplicates = sum(n - 1 for n in per.values() if n > 1)
print(f"delivered={len(names)} distinct={len(per)} duplicates={duplicates} missing={len(missing)}")
assert not missing, missing[:5]
# Each worker may have completed three messages whose outcome records were not yet committed
# (OutboxWorker.recordsInFlight).
assert duplicates <= 3 * int(sys.argv[2]), f"{duplicates} duplicates with {sys.argv[2]} workers"
PY
echo "outbox kill -9: ok"
