#!/usr/bin/env bash
# An HTTP mail provider beside SMTP (issue 15 point 5): `--smtp-url http(s)://…` POSTs each message
# as JSON signed in the Standard Webhooks format, checked by the `standardwebhooks` PyPI library in
# a local receiver (mail_http_receiver.py) under both secrets of a rotation.
#  1. the receiver answers 503 for 3 s, then 202: every message delivered exactly once, retried
#     after backoff, each POST of one message under the same webhook-id;
#  2. 422 for one recipient: that message dead with the answer kept, the address suppressed, the
#     others sent;
#  3. a real `postern serve` on the provider: a send-link's mail arrives, with its code;
#  4. set-up errors are clear and never echo a secret: no secret file, a bad line in it, credentials
#     in the URL, a literal loopback address (in any spelling) not in --allow-private-targets;
#  5. a provider named `localhost`, not allowed: refused as curl connects (the receiver sees no
#     POST), the mail kept for a retry, the log naming the address and not the URL's query.
# The receiver is on loopback, so the runs that reach it pass --allow-private-targets 127.0.0.1/32.
set -euo pipefail
source "$(dirname "$0")/outbox_lib.bash"
receiver_py="$root/Tests/integration/mail_http_receiver.py"
postern="$root/.build/debug/postern"
secret_old="whsec_$(printf 'the old mail secret, 32 bytes..!' | base64)"
secret_new="whsec_$(printf 'the new mail secret of 32 bytes!' | base64)"
printf '%s\n%s\n' "$secret_old" "$secret_new" >"$work/secrets"

# start_receiver NAME ARGS...: sets receiver_pid and receiver_port.
start_receiver() {
  local name=$1; shift
  mkdir -p "$work/$name"
  receiver_port=$(free_port)
  "$python" "$receiver_py" --port "$receiver_port" --out "$work/$name/out" --secret "$secret_old" --secret "$secret_new" "$@" \
    >"$work/$name/log" 2>&1 &
  receiver_pid=$!
  pids+=("$receiver_pid")
  for _ in $(seq 300); do grep -q listening "$work/$name/log" 2>/dev/null && return 0; sleep 0.1; done
  cat "$work/$name/log"; fail "the receiver did not start"
}

# 1 and 2: outages, then a refusal.
# Queued before the receiver starts: its 3 s of 503s count from its start.
db="$work/http.db"
"$bench" outbox-queue --database "$db" --count 10 >/dev/null
"$bench" outbox-queue --database "$db" --count 1 --to reject >/dev/null
start_receiver r1 --fail-seconds 3
"$bench" outbox-run --database "$db" --smtp-url "http://127.0.0.1:$receiver_port/mail" --mail-http-secret-file "$work/secrets" \
  --allow-private-targets 127.0.0.1/32 --base-delay 1 --max-delay 2 --poll 0.2 --timeout 60 >"$work/run.out" 2>"$work/run.err" \
  || { cat "$work/run.out"; tail "$work/run.err"; fail "outbox-run"; }
grep -q "sent=10 dead=1" "$work/run.out" || fail "counts: $(cat "$work/run.out")"
grep -q '^bad' "$work/r1/log" && fail "a POST failed verification: $(grep '^bad' "$work/r1/log" | head -3)"
grep -q '^503 ' "$work/r1/log" || fail "the receiver never answered 503"
for i in $(seq 0 9); do
  n=$(ls "$work/r1/out" | grep -c -- "-user$i@example.com.eml$" || true)
  [ "$n" -eq 1 ] || fail "user$i accepted $n times"
  # Every POST of one message carried one webhook-id: the receiver can drop a repeat.
  ids=$(awk -v r="user$i@example.com" '$3 == r { print $2 }' "$work/r1/log" | sort -u | wc -l)
  [ "$ids" -eq 1 ] || fail "user$i was posted under $ids webhook-ids"
done
retried=$(sql "$db" "SELECT count(*) FROM outbox WHERE state='sent' AND attempts > 1")
[ "$retried" -ge 1 ] || fail "no message was retried after the 503s"
[ "$(sql "$db" "SELECT last_reply FROM outbox WHERE state='dead'")" = "HTTP 422" ] || fail "the dead message lost its answer: $(sql "$db" "SELECT state, last_reply FROM outbox WHERE state='dead'")"
[ "$(sql "$db" "SELECT count(*) FROM suppressions")" = 1 ] || fail "the refused address is not suppressed"
[ "$(ls "$work/r1/out" | grep -c reject || true)" -eq 0 ] || fail "the refused recipient was stored"
echo "ok 1-2: 503 for 3 s then 202: 10 sent once each ($retried retried); 422: dead with its answer, suppressed"

# 3: the daemon on the provider.
start_receiver r2
port=$(free_port)
mkdir -p "$work/serve"
(cd "$work/serve" && exec "$postern" serve --listen "127.0.0.1:$port" --metrics-listen off --scrypt-log-n 12 \
  --smtp-url "http://127.0.0.1:$receiver_port/mail" --mail-http-secret-file "$work/secrets" \
  --allow-private-targets 127.0.0.1/32 >"$work/serve/out" 2>"$work/serve/log") &
pids+=("$!")
for _ in $(seq 300); do curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" && break; sleep 0.1; done
status=$(curl -s -o "$work/send.json" -w '%{http_code}' -H 'Content-Type: application/json' \
  --data '{"email":"someone@example.com"}' "http://127.0.0.1:$port/v1/email-link/send")
[ "$status" = 202 ] || fail "send-link answered $status: $(cat "$work/send.json")"
for _ in $(seq 300); do ls "$work/r2/out" 2>/dev/null | grep -q someone@example.com && break; sleep 0.1; done
mail=$(ls "$work/r2/out" | grep someone@example.com | head -1) || true
[ -n "$mail" ] || { tail "$work/serve/log"; fail "the daemon's mail never reached the provider"; }
grep -Eq "mode=(3D)?signIn" "$work/r2/out/$mail" || fail "the posted message is not the sign-in mail"
grep -q "signed JSON POST" "$work/serve/log" || fail "the log does not name the transport"
if grep -q -e "$secret_old" -e "$secret_new" -e "whsec_[A-Za-z0-9+/]" "$work/serve/log"; then fail "a secret reached the log"; fi
echo "ok 3: postern serve's sign-in mail reached the HTTP provider, signed"

# 4: set-up errors.
expect_refusal() { # expect_refusal WHAT ARGS...: serve must exit non-zero, naming WHAT, without a secret
  local what=$1; shift
  if "$postern" serve --listen "127.0.0.1:$(free_port)" --metrics-listen off --database "$work/refuse.db" "$@" >"$work/refuse.out" 2>"$work/refuse.err"; then
    fail "serve started with $*"
  fi
  grep -q -- "$what" "$work/refuse.err" || fail "the refusal does not name $what: $(cat "$work/refuse.err")"
  if grep -q -e "hunter2" -e "$secret_old" -e "c2VjcmV0" "$work/refuse.err"; then fail "a refusal echoed a secret"; fi
}
expect_refusal "--mail-http-secret-file" --smtp-url "https://mail.example.com/send"
printf '%s\nwhsec_c2VjcmV0\n' "$secret_old" >"$work/bad-secrets"
expect_refusal "line 2" --smtp-url "https://mail.example.com/send" --mail-http-secret-file "$work/bad-secrets"
expect_refusal "credentials" --smtp-url "https://user:hunter2@mail.example.com/send" --mail-http-secret-file "$work/secrets"
expect_refusal "cannot read" --smtp-url "https://mail.example.com/send" --mail-http-secret-file "$work/none"
for target in "http://127.0.0.1:9/send" "http://0x7f000001:9/send" "http://2130706433:9/send" "http://[::ffff:127.0.0.1]:9/send" \
  "http://169.254.169.254/send" "http://10.0.0.1/send" "http://[::1]:9/send"; do
  expect_refusal "--smtp-url: .* is a .* address" --smtp-url "$target" --mail-http-secret-file "$work/secrets"
done
POSTERN_ALLOW_PRIVATE_TARGETS=10.0.0.0/8 expect_refusal "--smtp-url: 127.0.0.1 is a loopback address" \
  --smtp-url "http://0x7f000001:9/send" --mail-http-secret-file "$work/secrets"
echo "ok 4: set-up errors name the setting and never a secret"

# 5: a name that resolves to loopback passes the start-up check and is refused at connect.
start_receiver r3
port=$(free_port)
mkdir -p "$work/serve5"
(cd "$work/serve5" && exec "$postern" serve --listen "127.0.0.1:$port" --metrics-listen off --scrypt-log-n 12 \
  --smtp-url "http://localhost:$receiver_port/mail?key=s3cr3t-in-url" --mail-http-secret-file "$work/secrets" \
  >"$work/serve5/out" 2>"$work/serve5/log") &
pids+=("$!")
for _ in $(seq 300); do curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" && break; sleep 0.1; done
status=$(curl -s -o "$work/send5.json" -w '%{http_code}' -H 'Content-Type: application/json' \
  --data '{"email":"someone@example.com"}' "http://127.0.0.1:$port/v1/email-link/send")
[ "$status" = 202 ] || fail "send-link answered $status: $(cat "$work/send5.json")"
for _ in $(seq 300); do grep -q "is a loopback address" "$work/serve5/log" && break; sleep 0.1; done
grep -q "is a loopback address; outgoing HTTP reaches such addresses only when --allow-private-targets lists them" "$work/serve5/log" \
  || { tail "$work/serve5/log"; fail "the refused connection is not logged clearly"; }
grep -q "s3cr3t-in-url" "$work/serve5/log" "$work/serve5/out" && fail "the URL's query reached the log"
[ -z "$(ls "$work/r3/out" 2>/dev/null)" ] || fail "the provider on loopback was reached: $(ls "$work/r3/out")"
grep -Eq '^([0-9]{3}|bad) ' "$work/r3/log" && fail "the provider on loopback got a POST: $(head -3 "$work/r3/log")"
echo "ok 5: a provider name that resolves to loopback is refused at connect, the log naming the address only"
echo "mail-http: all passed"
