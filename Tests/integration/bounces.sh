#!/usr/bin/env bash
# Bounces (issue 15 point 3) with a real relay: a private instance of Debian's Postfix on a free
# loopback port accepts a sign-in mail from `postern serve` (--bounce-address, so the message
# leaves from its own bounce+<id>.<key>.<tag>@relay.test), fails to deliver it to an unknown local
# user, and writes its own DSN to the bounce address's mailbox. That DSN, fed back through
# POST /v1/admin/bounces and `postern bounces take`:
#  1. marks the message bounced (5.1.1) and suppresses the address: the next mail to it is dead
#     without reaching Postfix;
#  2. a vacation reply at the bounce address is ignored (exit 0), a forged tag matches nothing;
#  3. /metrics counts the outcomes, and the log holds no bounce tag.
# Needs root (Postfix's master runs as root).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
postern="$root/.build/debug/postern"
python="${POSTERN_PYTHON:-$root/.venv/bin/python}"
work=$(mktemp -d)
chmod 755 "$work"  # the postfix user walks into it (its data directory), as does local(8) as nobody
pf="$work/postfix"
serve_pid=
hook_pid=
cleanup() {
  # Each line ends in `|| true`: under set -e a failing last command of an && list (a wait on
  # a killed process is 143) would become the script's exit status.
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null || true
  [ -n "$hook_pid" ] && kill "$hook_pid" 2>/dev/null && wait "$hook_pid" 2>/dev/null || true
  [ -f "$pf/etc/main.cf" ] && postfix -c "$pf/etc" stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$pf/maillog" ] && tail -20 "$pf/maillog"; [ -f "$work/serve/log" ] && tail -5 "$work/serve/log"; exit 1; }
free_port() { "$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
[ "$(id -u)" = 0 ] || fail "needs root: Postfix's master runs as root"
command -v postfix >/dev/null || fail "Postfix is not installed (scripts/setup --python installs it)"

# A Postfix of our own: its own queue, config and log; local delivery for relay.test, every
# recipient accepted at SMTP time (so an unknown user is a bounce after the fact, with a DSN),
# and bounce+anything@relay.test delivered to a file.
mkdir -p "$pf/etc" "$pf/queue" "$pf/data" "$pf/box"
chown postfix "$pf/data"
chmod 777 "$pf/box"
smtp_port=$(free_port)
cat >"$pf/etc/main.cf" <<CONF
compatibility_level = 3.6
queue_directory = $pf/queue
data_directory = $pf/data
mail_owner = postfix
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
myhostname = relay.test
mydomain = relay.test
myorigin = relay.test
mydestination = relay.test
mynetworks = 127.0.0.0/8
local_recipient_maps =
alias_maps = hash:$pf/etc/aliases
alias_database = hash:$pf/etc/aliases
recipient_delimiter = +
default_privs = nobody
maillog_file = $pf/maillog
maillog_file_prefixes = $pf
smtputf8_enable = no
CONF
{
  echo "127.0.0.1:$smtp_port inet n - n - - smtpd"
  for service in "pickup unix n - n 60 1 pickup" "cleanup unix n - n - 0 cleanup" "qmgr unix n - n 300 1 qmgr" \
    "rewrite unix - - n - - trivial-rewrite" "bounce unix - - n - 0 bounce" "defer unix - - n - 0 bounce" \
    "trace unix - - n - 0 bounce" "verify unix - - n - 1 verify" "flush unix n - n 1000? 0 flush" \
    "proxymap unix - - n - - proxymap" "smtp unix - - n - - smtp" "relay unix - - n - - smtp" \
    "showq unix n - n - - showq" "error unix - - n - - error" "retry unix - - n - - error" \
    "discard unix - - n - - discard" "local unix - n n - - local" "anvil unix - - n - 1 anvil" \
    "scache unix - - n - 1 scache" "postlog unix-dgram n - n - 1 postlogd"; do
    echo "$service"
  done
} >"$pf/etc/master.cf"
echo "bounce: $pf/box/bounces.mbox" >"$pf/etc/aliases"
postalias -c "$pf/etc" "$pf/etc/aliases"
postfix -c "$pf/etc" check >/dev/null 2>&1 || true  # creates the queue directories
postfix -c "$pf/etc" start >/dev/null 2>&1 || fail "Postfix did not start"
for _ in $(seq 300); do (exec 3<>"/dev/tcp/127.0.0.1/$smtp_port") 2>/dev/null && break; sleep 0.1; done

# A webhook receiver (signed_receiver.py) that verifies with the standardwebhooks library and logs
# each event's type and data (mail.bounced is the one this test causes).
hook_port=$(free_port)
secret="whsec_$(printf 'the bounce test secret of 32 b.!' | base64)"
echo "$secret" >"$work/hook.secret"
"$python" "$root/Tests/integration/signed_receiver.py" "$hook_port" "$secret" >"$work/hooks.log" 2>&1 &
hook_pid=$!
for _ in $(seq 300); do grep -q listening "$work/hooks.log" 2>/dev/null && break; sleep 0.1; done

# postern serve on the relay, with its reverse paths under bounce@relay.test.
port=$(free_port)
token="bounce-test-admin-token-$RANDOM$RANDOM"
mkdir -p "$work/serve"
(cd "$work/serve" && exec "$postern" serve --listen "127.0.0.1:$port" --metrics-listen off --scrypt-log-n 12 \
  --smtp-url "smtp+plain://127.0.0.1:$smtp_port" --mail-from "Postern <no-reply@relay.test>" \
  --bounce-address bounce@relay.test --admin-token "$token" --mail-interval 0 \
  --webhook-urls "http://127.0.0.1:$hook_port/hooks" --webhook-secret-file "$work/hook.secret" --webhook-retry-base 1 \
  --allow-private-targets 127.0.0.1/32 \
  >"$work/serve/out" 2>"$work/serve/log") &
serve_pid=$!
base="http://127.0.0.1:$port"
for _ in $(seq 300); do curl -sf -o /dev/null "$base/healthz" && break; sleep 0.1; done
admin() { curl -s -H "Authorization: Bearer $token" "$@"; }
send() {
  local status
  status=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' --data "{\"email\":\"$1\"}" "$base/v1/email-link/send")
  [ "$status" = 202 ] || fail "send-link for $1 answered $status"
}
# outbox_field ID EXPR: a field of message ID as the admin API lists it (python expression on m).
outbox_field() {
  admin "$base/v1/admin/outbox" | "$python" -c "import json,sys; m=[m for m in json.load(sys.stdin)['messages'] if m['id']==$1][0]; v=($2); print(*(v if isinstance(v, tuple) else (v,)))"
}

send nobody-here@relay.test
for _ in $(seq 300); do [ "$(outbox_field 1 "m['state']" 2>/dev/null)" = sent ] && break; sleep 0.1; done
[ "$(outbox_field 1 "m['state']")" = sent ] || fail "Postfix did not take the mail: $(outbox_field 1 "m")"
# Until local(8) has logged the delivery, not only begun the file: a copy taken mid-write was half a DSN.
for _ in $(seq 300); do [ -s "$pf/box/bounces.mbox" ] && grep -q "delivered to file" "$pf/maillog" 2>/dev/null && break; sleep 0.1; done
[ -s "$pf/box/bounces.mbox" ] || fail "Postfix wrote no DSN to the bounce address"
grep -q "report-type=delivery-status" "$pf/box/bounces.mbox" || fail "the mailbox holds no DSN"
grep -Eq "^Delivered-To: bounce\+1\.[0-9]+\.[0-9a-f]{16}@relay.test" "$pf/box/bounces.mbox" || fail "the DSN did not come to the message's own reverse path"
cp "$pf/box/bounces.mbox" "$work/dsn.eml"

# 1. The DSN through the admin API.
answer=$(admin -H 'Content-Type: message/rfc822' --data-binary @"$work/dsn.eml" "$base/v1/admin/bounces")
[ "$(echo "$answer" | "$python" -c 'import json,sys; a=json.load(sys.stdin); print(a["outcome"], a["messageId"], a["status"])')" = "bounced 1 5.1.1" ] \
  || fail "the DSN was not matched: $answer"
[ "$(outbox_field 1 "m['bounce']['kind'], m['bounce']['status']")" = "failed 5.1.1" ] || fail "the bounce is not on the message: $(outbox_field 1 m)"
outbox_field 1 "m['bounce']['detail']" | grep -q "nobody-here" && fail "the bounce detail names the recipient"
send nobody-here@relay.test
for _ in $(seq 300); do [ "$(outbox_field 2 "m['state']" 2>/dev/null)" = dead ] && break; sleep 0.1; done
[ "$(outbox_field 2 "m['state']")" = dead ] || fail "mail to the bounced address was not stopped: $(outbox_field 2 "m")"
[ "$(grep -c 'to=<nobody-here@relay.test>' "$pf/maillog")" = 1 ] || fail "the suppressed address reached Postfix again"
for _ in $(seq 300); do grep -q '"mail.bounced"' "$work/hooks.log" && break; sleep 0.1; done
grep -q '^bad' "$work/hooks.log" && fail "a webhook failed verification: $(grep '^bad' "$work/hooks.log")"
bounced=$(grep '"mail.bounced"' "$work/hooks.log" | head -1)
[ -n "$bounced" ] || fail "no mail.bounced event: $(cat "$work/hooks.log")"
echo "$bounced" | "$python" -c 'import json,sys; d=json.load(sys.stdin)["data"]; assert d == {"messageId": 1, "kind": "sign-in", "reason": "bounced", "status": "5.1.1", "email": "nobody-here@relay.test"}, d' \
  || fail "the mail.bounced event is not as documented: $bounced"
echo "ok 1: Postfix's DSN: message 1 bounced (5.1.1), the address suppressed, the next mail dead before Postfix, a verified mail.bounced event"

# 2. The command for a relay's pipe; a vacation reply; a forged tag; the wrong media type.
"$postern" bounces take "$work/dsn.eml" --database "$work/serve/postern.db" --bounce-address bounce@relay.test >"$work/take.out" || fail "bounces take failed"
grep -q "^bounced	message 1	5.1.1" "$work/take.out" || fail "bounces take: $(cat "$work/take.out")"
printf 'From: ann@example.org\nTo: bounce+1.1.0123456789abcdef@relay.test\nSubject: Out of office\n\nBack Monday.\n' \
  | "$postern" bounces take --database "$work/serve/postern.db" --bounce-address bounce@relay.test >"$work/vacation.out" || fail "a vacation reply made bounces take fail"
grep -q "^ignored.*not a delivery report" "$work/vacation.out" || fail "vacation: $(cat "$work/vacation.out")"
sed -E 's/(bounce\+1\.[0-9]+\.)[0-9a-f]{16}/\10000000000000000/g' "$work/dsn.eml" >"$work/forged.eml"
grep -q "0000000000000000@relay.test" "$work/forged.eml" || fail "the forged report was not made"
[ "$(admin -H 'Content-Type: message/rfc822' --data-binary @"$work/forged.eml" "$base/v1/admin/bounces" | "$python" -c 'import json,sys; print(json.load(sys.stdin)["outcome"])')" = ignored ] \
  || fail "a forged tag was matched"
status=$(admin -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' --data-binary @"$work/dsn.eml" "$base/v1/admin/bounces")
[ "$status" = 415 ] || fail "a report sent as JSON answered $status"
status=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: message/rfc822' --data-binary @"$work/dsn.eml" "$base/v1/admin/bounces")
[ "$status" = 401 ] || fail "a report without the admin token answered $status"
echo "ok 2: bounces take matches the same DSN; a vacation reply is ignored with exit 0; a forged tag matches nothing; 415 and 401"

# 3. Metrics and logs.
metrics=$(curl -s -H "Authorization: Bearer $token" "$base/metrics")
echo "$metrics" | grep -q 'postern_bounces_total{outcome="bounced"} 1' || fail "metrics: $(echo "$metrics" | grep bounces)"
echo "$metrics" | grep -q 'postern_bounces_total{outcome="ignored"} 1' || fail "metrics: $(echo "$metrics" | grep bounces)"
tag=$(grep -Eo "bounce\+1\.[0-9]+\.[0-9a-f]{16}" "$work/dsn.eml" | head -1)
grep -q -- "$tag" "$work/serve/log" && fail "a bounce tag reached the log"
echo "ok 3: /metrics counts bounced 1 and ignored 1; the log holds no tag"
echo "bounces: all passed"
