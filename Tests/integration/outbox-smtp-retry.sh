#!/usr/bin/env bash
# Transient and permanent SMTP failures against aiosmtpd (no TLS: smtp+plain://):
# a server answering 451 (then, in a second round, 421) for a few seconds and 250 after → every
# message delivered exactly once, after backoff (more than one attempt recorded); a 550 for one
# recipient → that message dead and the address suppressed, the others delivered; a later message
# to the suppressed address is dead without reaching the server.
set -euo pipefail
source "$(dirname "$0")/outbox_lib.bash"

for code in 451 421; do
  port=$(free_port)
  db="$work/retry$code.db"
  # Queued before the server starts, and the clock read before it too: its 3 s of failures count
  # from its start, and queueing after it ate into them on a busy machine.
  "$bench" outbox-queue --database "$db" --count 10 >/dev/null
  "$bench" outbox-queue --database "$db" --count 1 --to reject >/dev/null
  start=$(date +%s.%N)
  start_server "s$code" --port "$port" --fail-seconds 3 --fail-code "$code" --reject-prefix reject
  pid=$server_pid
  "$bench" outbox-run --database "$db" --smtp-url "smtp+plain://127.0.0.1:$port" --base-delay 1 --max-delay 2 --poll 0.2 \
    --timeout 60 >"$work/run$code.out" 2>"$work/run$code.err" || { cat "$work/run$code.out"; tail "$work/run$code.err"; fail "run ($code)"; }
  grep -q "sent=10 dead=1" "$work/run$code.out" || fail "$code: $(cat "$work/run$code.out")"
  grep -q "^fail $code" "$work/s$code/server.log" || fail "the server never answered $code"
  for i in $(seq 0 9); do
    n=$(delivered_count "$work/s$code/out" "user$i@example.com")
    [ "$n" -eq 1 ] || fail "$code: user$i delivered $n times"
  done
  [ "$(delivered_count "$work/s$code/out" reject0@example.com)" -eq 0 ] || fail "the rejected recipient got mail"
  # A 451 is about one message: each is retried on its own. A 421 closes the connection: the
  # message tried is retried, and the rest of that worker's batch waits untried.
  want=10; [ "$code" = 421 ] && want=1
  retried=$(sql "$db" "SELECT count(*) FROM outbox WHERE state='sent' AND attempts > 1")
  [ "$retried" -ge "$want" ] || fail "$code: $retried retried, want ≥ $want: $(sql "$db" "SELECT id, attempts, last_reply FROM outbox")"
  # The first retry waits the base delay (1 s, less up to a quarter of jitter): not before.
  elapsed=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { print e - s }')
  awk -v e="$elapsed" 'BEGIN { exit !(e >= 3) }' || fail "finished in ${elapsed}s, before the failures ended"
  dead=$(sql "$db" "SELECT state, last_reply FROM outbox o WHERE recipient_local = 'reject0'")
  # The reply is kept as the delivery log keeps it: the address the server quoted is not repeated.
  [[ "$dead" == "dead|550 5.1.1 <address> recipient rejected" ]] || fail "550: $dead"
  [ "$(sql "$db" "SELECT address FROM suppressions")" = "reject0@example.com" ] || fail "not suppressed"
  [ "$(sql "$db" "SELECT count(*) FROM outbox WHERE body IS NOT NULL")" = 0 ] || fail "a finished message kept its body"

  # Suppressed: a new message to that address dies without a connection attempt.
  before=$(grep -c "^reject" "$work/s$code/server.log")
  "$bench" outbox-queue --database "$db" --count 1 --to reject >/dev/null
  "$bench" outbox-run --database "$db" --smtp-url "smtp+plain://127.0.0.1:$port" --timeout 10 >"$work/again.out" 2>/dev/null
  grep -q "sent=10 dead=2" "$work/again.out" || fail "suppressed: $(cat "$work/again.out")"
  [ "$(grep -c "^reject" "$work/s$code/server.log")" = "$before" ] || fail "the suppressed address reached the server"
  sql "$db" "SELECT last_reply FROM outbox ORDER BY id DESC LIMIT 1" | grep -q suppressed || fail "no suppression reply"
  stop_server "$pid"
done
echo "outbox smtp retry: ok"
