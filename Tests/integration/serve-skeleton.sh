#!/usr/bin/env bash
# `postern serve` on the embedded defaults in an empty directory: creates the database and the
# master key (0600), answers /healthz, /readyz and the JWKS, refuses a bad setting with exit 64,
# and stops cleanly on SIGTERM. Without --public-url the mail's links point at --listen's port; a
# second daemon on the same --metrics-listen exits 69 naming it; one with another master key exits
# 69 naming the key file and what to do.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
postern=${POSTERN_BIN:-$root/.build/debug/postern}
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$work"
# Free ports from the kernel (a random one was sometimes taken: a silent failure in CI).
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=$(free_port)
metrics_port=$(free_port)
# Any failing step says where, with the daemon's log.
trap 'echo "serve skeleton: failed at line $LINENO"; [ -f serve.log ] && tail -n 20 serve.log' ERR

# (`|| code=$?`, not set +e: the ERR trap fires under set +e too and printed a false "failed".)
code=0
"$postern" serve --public-url not-a-url 2>err.txt || code=$?
[ "$code" -eq 64 ] || { echo "bad --public-url exited $code, want 64"; exit 1; }
grep -q "public-url" err.txt || { echo "the error does not name the setting"; cat err.txt; exit 1; }

# The metrics listener on a port of its own, so parallel runs do not race for the default 9464.
"$postern" serve --listen "127.0.0.1:$port" --metrics-listen "127.0.0.1:$metrics_port" 2>serve.log &
pid=$!
for _ in $(seq 300); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
[ "$(curl -sf "http://127.0.0.1:$port/healthz")" = '{"status":"ok"}' ]
[ "$(curl -sf "http://127.0.0.1:$port/readyz")" = '{"status":"ready"}' ]
# (Into a variable first: grep -q in a pipe ends early, and under pipefail the writer's SIGPIPE fails the line.)
jwks=$(curl -sf "http://127.0.0.1:$port/.well-known/jwks.json")
grep -q '"crv":"P-256"' <<<"$jwks"
# /metrics: on its own listener; on the main one not without the admin token (none configured: 404).
metrics=$(curl -sf "http://127.0.0.1:$metrics_port/metrics")
grep -q '^postern_outbox_messages' <<<"$metrics"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/metrics")" = 404 ]
[ "$(stat -c %a postern.db)" = 600 ] && [ "$(stat -c %a postern.key)" = 600 ]
status=$(curl -s -o /dev/null -w '%{http_code}' -X POST --data-binary @<(head -c 70000 /dev/zero) "http://127.0.0.1:$port/v1/x")
[ "$status" = 413 ] || { echo "70 KB body got $status, want 413"; exit 1; }
# Logs are JSON lines and hold no key material.
key=$(cat postern.key)
# (An if, not `! grep`: set -e ignores a negated command, so that line could never fail.)
if grep -q "$key" serve.log; then echo "key material in the log"; exit 1; fi
python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' serve.log
# No --public-url: the links in mail point at the --listen address (they pointed at :8080
# whatever --listen said), and the daemon on loopback starts without a warning about it.
curl -sf -H 'Content-Type: application/json' -d '{"email":"walk@example.com"}' "http://127.0.0.1:$port/v1/email-link/send" >/dev/null
for _ in $(seq 100); do ls mail-out/*.eml >/dev/null 2>&1 && break; sleep 0.1; done
grep -q "http://127.0.0.1:$port/action" mail-out/*.eml || { echo "the link does not point at --listen's port $port"; grep -o 'http://[^/]*/action' mail-out/*.eml | head -1; exit 1; }
if grep -q 'public-url is not set' serve.log; then echo "a warning about --public-url on loopback"; exit 1; fi
# A second daemon on this host with the same --metrics-listen stops with exit 69 and says so.
other_port=$(free_port)
code=0
"$postern" serve --listen "127.0.0.1:$other_port" --database second.db --metrics-listen "127.0.0.1:$metrics_port" 2>second.txt || code=$?
[ "$code" -eq 69 ] || { echo "a second daemon on the same metrics port exited $code, want 69"; cat second.txt; exit 1; }
grep -q -- "--metrics-listen" second.txt || { echo "the error does not name --metrics-listen"; cat second.txt; exit 1; }
kill -TERM "$pid"
wait "$pid"
grep -q '"msg":"stopped"' serve.log
# Another master key than the database's: exit 69 naming the key file and what to do, no key.
code=0
"$postern" serve --listen "127.0.0.1:$other_port" --metrics-listen off --master-key-file other.key 2>wrongkey.txt || code=$?
[ "$code" -eq 69 ] || { echo "a daemon with another master key exited $code, want 69"; cat wrongkey.txt; exit 1; }
grep -q "other.key" wrongkey.txt && grep -q -- "--master-key-file" wrongkey.txt && grep -q "same key file" wrongkey.txt \
  || { echo "the error does not say which key file and what to do"; cat wrongkey.txt; exit 1; }
if grep -q -e "$key" -e "$(cat other.key)" wrongkey.txt; then echo "key material in the error"; exit 1; fi
keys=$("$postern" keys list)
grep -q "action-code  active" <<<"$keys"
echo "serve skeleton: ok"
