#!/usr/bin/env bash
# Providers' delivery events (issue 47 point 5) against the real daemon. delivery_events_helper.py
# plays Amazon SNS (an https server on loopback with a CA of its own, its signing certificate made
# and its messages signed with `cryptography`), a relay that keeps each mail's envelope sender
# (aiosmtpd), and Resend (events signed with the `standardwebhooks` library). `postern serve`
# takes SNS certificates from that host alone (--sns-certificate-hosts localhost:PORT,
# --sns-ca-file: the rule is the setting, the default is Amazon's).
#  1. a signed SubscriptionConfirmation is confirmed: the daemon GETs its SubscribeURL;
#  2. a Postfix-style DSN for a sign-in mail (the existing bounce intake), a signed SNS Permanent
#     bounce and a signed SNS complaint: the suppression list, printed through the admin API AND
#     `postern suppressions list`, holds all three with their reasons;
#  3. the attacker's SNS messages are 401 and suppress nothing: another topic, a changed message,
#     a certificate URL off the allowed host; a Transient bounce is ignored;
#  4. Postmark's hard bounce with the credentials of its URL suppresses, wrong credentials are
#     401; a Resend email.bounced signed under svix-* suppresses, the same event again is 401;
#  5. /metrics counts postern_delivery_events_total; the log names no address.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
postern="$root/.build/debug/postern"
python="${POSTERN_PYTHON:-$root/.venv/bin/python}"
helper="$root/Tests/integration/delivery_events_helper.py"
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$work/serve/log" ] && tail -5 "$work/serve/log"; exit 1; }
free_port() { "$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_for() { for _ in $(seq 300); do grep -q "$1" "$2" 2>/dev/null && return 0; sleep 0.1; done; fail "no '$1' in $2"; }

# SNS's certificate host and the relay.
pem_port=$(free_port)
mkdir -p "$work/sns" "$work/relay" "$work/serve"
"$python" "$helper" serve "$work/sns" "$pem_port" >"$work/sns.log" 2>&1 &
pids+=($!)
wait_for listening "$work/sns.log"
smtp_port=$(free_port)
"$python" "$helper" smtp "$smtp_port" "$work/relay" >"$work/relay.log" 2>&1 &
pids+=($!)
wait_for listening "$work/relay.log"

topic="arn:aws:sns:us-east-1:123456789012:postern-ses"
cert_url="https://localhost:$pem_port/SimpleNotificationService-test.pem"
postmark_credentials="postmark:the-postmark-test-password"
echo "$postmark_credentials" >"$work/postmark.txt"
resend_secret="whsec_$(printf 'the resend test secret of 32 b.!' | base64)"
echo "$resend_secret" >"$work/resend.secret"
chmod 600 "$work/postmark.txt" "$work/resend.secret"

port=$(free_port)
token="delivery-events-admin-token-$RANDOM$RANDOM"
(cd "$work/serve" && exec "$postern" serve --listen "127.0.0.1:$port" --metrics-listen off --scrypt-log-n 12 \
  --smtp-url "smtp+plain://127.0.0.1:$smtp_port" --mail-from "Postern <no-reply@relay.test>" \
  --bounce-address bounce@relay.test --admin-token "$token" --mail-interval 0 \
  --ses-topic-arns "$topic" --sns-certificate-hosts "localhost:$pem_port" --sns-ca-file "$work/sns/ca.pem" \
  --postmark-webhook-credentials-file "$work/postmark.txt" --delivery-webhook-secret-file "$work/resend.secret" \
  >"$work/serve/out" 2>"$work/serve/log") &
pids+=($!)
base="http://127.0.0.1:$port"
for _ in $(seq 300); do curl -sf -o /dev/null "$base/healthz" && break; sleep 0.1; done
admin() { curl -s -H "Authorization: Bearer $token" "$@"; }
# post PATH FILE [curl args…]: prints "STATUS BODY".
post() {
  local path=$1 file=$2
  shift 2
  curl -s -o "$work/answer" -w '%{http_code}' "$@" --data-binary @"$file" "$base$path"
  printf ' %s' "$(cat "$work/answer")"
}
sns_post() { post /v1/delivery-events/ses "$1" -H 'Content-Type: text/plain; charset=UTF-8'; }
ses_event() { # ses_event FILE TOPIC CERT_URL MESSAGE
  "$python" "$helper" sns "$work/sns" notification "$2" "$3" "$4" >"$1"
}
bounce_json() {
  printf '{"notificationType":"Bounce","bounce":{"bounceType":"%s","bounceSubType":"General","bouncedRecipients":[{"emailAddress":"%s","action":"failed","status":"5.1.1","diagnosticCode":"smtp; 550 5.1.1 user unknown"}],"timestamp":"2026-12-07T05:00:00.000Z","feedbackId":"0100"},"mail":{"messageId":"0100","source":"no-reply@relay.test","destination":["%s"]}}' "$1" "$2" "$2"
}
complaint_json() {
  printf '{"notificationType":"Complaint","complaint":{"complainedRecipients":[{"emailAddress":"%s"}],"complaintFeedbackType":"abuse","timestamp":"2026-12-07T05:00:00.000Z","feedbackId":"0101"},"mail":{"messageId":"0101","destination":["%s"]}}' "$1" "$1"
}

# 1. The subscription.
subscribe="https://localhost:$pem_port/?Action=ConfirmSubscription&TopicArn=$topic&Token=confirm-me"
"$python" "$helper" sns "$work/sns" confirmation "$topic" "$cert_url" "$subscribe" >"$work/confirm.json"
answer=$(sns_post "$work/confirm.json")
[ "$answer" = '200 {"ignored":0,"suppressed":0}' ] || fail "the confirmation answered $answer"
wait_for "get /?Action=ConfirmSubscription" "$work/sns.log"
wait_for "sns subscription confirmed" "$work/serve/log"
echo "ok 1: a signed SubscriptionConfirmation: the daemon fetched the certificate over https and GOT the SubscribeURL"

# 2. A Postfix-style DSN, an SNS bounce, an SNS complaint.
status=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' --data '{"email":"nobody-here@relay.test"}' "$base/v1/email-link/send")
[ "$status" = 202 ] || fail "send-link answered $status"
for _ in $(seq 300); do [ -s "$work/relay/1.from" ] && break; sleep 0.1; done
[ -s "$work/relay/1.from" ] || fail "the relay got no mail"
reverse_path=$(cat "$work/relay/1.from")
[[ "$reverse_path" =~ ^bounce\+1\.[0-9]+\.[0-9a-f]{16}@relay\.test$ ]] || fail "the mail left from $reverse_path"
{
  printf 'From: MAILER-DAEMON@relay.test (Mail Delivery System)\r\nTo: %s\r\nSubject: Undelivered Mail Returned to Sender\r\n' "$reverse_path"
  printf 'MIME-Version: 1.0\r\nContent-Type: multipart/report; report-type=delivery-status; boundary="B1"\r\n\r\n'
  printf -- '--B1\r\nContent-Type: text/plain\r\n\r\nI'"'"'m sorry to have to inform you that your message could not be delivered.\r\n\r\n'
  printf -- '--B1\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; relay.test\r\nX-Postfix-Queue-ID: 4ABC\r\nX-Postfix-Sender: rfc822; %s\r\n\r\n' "$reverse_path"
  printf 'Final-Recipient: rfc822; nobody-here@relay.test\r\nOriginal-Recipient: rfc822;nobody-here@relay.test\r\nAction: failed\r\nStatus: 5.1.1\r\nDiagnostic-Code: X-Postfix; unknown user: "nobody-here"\r\n\r\n'
  printf -- '--B1\r\nContent-Type: text/rfc822-headers\r\n\r\nReturn-Path: <%s>\r\nSubject: Sign in\r\n\r\n--B1--\r\n' "$reverse_path"
} >"$work/dsn.eml"
answer=$(admin -H 'Content-Type: message/rfc822' --data-binary @"$work/dsn.eml" "$base/v1/admin/bounces")
echo "$answer" | grep -q '"outcome":"bounced"' || fail "the DSN was not matched: $answer"
ses_event "$work/bounce.json" "$topic" "$cert_url" "$(bounce_json Permanent ses-bounced@example.com)"
answer=$(sns_post "$work/bounce.json")
[ "$answer" = '200 {"ignored":0,"suppressed":1}' ] || fail "the SNS bounce answered $answer"
ses_event "$work/complaint.json" "$topic" "$cert_url" "$(complaint_json ses-complained@example.com)"
answer=$(sns_post "$work/complaint.json")
[ "$answer" = '200 {"ignored":0,"suppressed":1}' ] || fail "the SNS complaint answered $answer"
echo "--- the suppression list through the admin API (GET /v1/admin/suppressions):"
admin "$base/v1/admin/suppressions" | tee "$work/list.json"
echo
echo "--- the suppression list through the CLI (postern suppressions list):"
"$postern" suppressions list --database "$work/serve/postern.db" | tee "$work/list.txt"
"$python" - "$work/list.json" <<'PY' || fail "the admin API's list is not the three suppressions"
import json, sys
rows = {s["email"]: s["reason"] for s in json.load(open(sys.argv[1]))["suppressions"]}
assert rows == {"nobody-here@relay.test": "bounce", "ses-bounced@example.com": "bounce", "ses-complained@example.com": "complaint"}, rows
PY
for expected in "nobody-here@relay.test.*bounce" "ses-bounced@example.com.*bounce.*amazon-ses Permanent/General 5.1.1" "ses-complained@example.com.*complaint.*amazon-ses abuse"; do
  grep -Eq "$expected" "$work/list.txt" || fail "postern suppressions list lacks $expected"
done
echo "ok 2: the DSN, the SNS bounce and the SNS complaint are one suppression list, through the admin API and the CLI"

# 3. The attacker's SNS messages.
ses_event "$work/other-topic.json" "arn:aws:sns:us-east-1:666666666666:attacker" "$cert_url" "$(bounce_json Permanent eve@example.com)"
ses_event "$work/other-host.json" "$topic" "https://127.0.0.1:$pem_port/SimpleNotificationService-test.pem" "$(bounce_json Permanent eve@example.com)"
ses_event "$work/http.json" "$topic" "http://localhost:$pem_port/SimpleNotificationService-test.pem" "$(bounce_json Permanent eve@example.com)"
ses_event "$work/changed.json" "$topic" "$cert_url" "$(bounce_json Permanent ann@example.com)"
sed -i 's/ann@example.com/eve@example.com/g' "$work/changed.json"
for attack in other-topic other-host http changed; do
  answer=$(sns_post "$work/$attack.json")
  [[ "$answer" == "401 "*UNAUTHORIZED* ]] || fail "the $attack SNS message answered $answer"
done
ses_event "$work/transient.json" "$topic" "$cert_url" "$(bounce_json Transient eve@example.com)"
answer=$(sns_post "$work/transient.json")
[ "$answer" = '200 {"ignored":1,"suppressed":0}' ] || fail "the transient bounce answered $answer"
answer=$(sns_post "$work/bounce.json")
[[ "$answer" == "401 "*UNAUTHORIZED* ]] || fail "the SNS bounce posted again answered $answer"
[ "$(admin "$base/v1/admin/suppressions?email=eve@example.com")" = '{"suppressions":[]}' ] || fail "an attacker's message suppressed eve"
[ "$(grep -c '^get /SimpleNotificationService-test.pem' "$work/sns.log")" = 1 ] || fail "the certificate was fetched more than once: $(cat "$work/sns.log")"
echo "ok 3: another topic, another host, http, a changed message, a replayed notification: 401, nothing suppressed; a transient bounce ignored; the certificate fetched once"

# 4. Postmark and Resend.
printf '{"RecordType":"Bounce","Type":"HardBounce","TypeCode":1,"MessageID":"883953f4","Email":"pm-bounced@example.com","Description":"The server was unable to deliver your message","BouncedAt":"2026-12-07T05:00:00Z"}' >"$work/postmark.json"
answer=$(post /v1/delivery-events/postmark "$work/postmark.json" -H 'Content-Type: application/json' -u "$postmark_credentials")
[ "$answer" = '200 {"ignored":0,"suppressed":1}' ] || fail "Postmark's hard bounce answered $answer"
answer=$(post /v1/delivery-events/postmark "$work/postmark.json" -H 'Content-Type: application/json' -u "postmark:a-wrong-password-guess")
[[ "$answer" == "401 "* ]] || fail "Postmark with wrong credentials answered $answer"
mapfile -t headers < <("$python" "$helper" resend "$resend_secret" email.bounced resend-bounced@example.com "$work/resend.json")
curl_headers=()
for header in "${headers[@]}"; do curl_headers+=(-H "$header"); done
answer=$(post /v1/delivery-events/standard-webhooks "$work/resend.json" -H 'Content-Type: application/json' "${curl_headers[@]}")
[ "$answer" = '200 {"ignored":0,"suppressed":1}' ] || fail "Resend's bounce answered $answer"
answer=$(post /v1/delivery-events/standard-webhooks "$work/resend.json" -H 'Content-Type: application/json' "${curl_headers[@]}")
[[ "$answer" == "401 "*replay* ]] || fail "Resend's event again answered $answer"
reasons=$(admin "$base/v1/admin/suppressions" | "$python" -c 'import json,sys; print(" ".join(sorted(s["email"] + "=" + s["reason"] for s in json.load(sys.stdin)["suppressions"] if not s["email"].startswith(("ses-", "nobody")))))')
[ "$reasons" = "pm-bounced@example.com=bounce resend-bounced@example.com=bounce" ] || fail "Postmark's and Resend's suppressions: $reasons"
echo "ok 4: Postmark's hard bounce with its URL's credentials and Resend's signed email.bounced suppress; wrong credentials and a replay are 401"

# 5. Metrics and the log.
metrics=$(admin "$base/metrics")
for line in 'provider="ses",outcome="suppressed"} 2' 'provider="ses",outcome="ignored"} 1' 'provider="ses",outcome="refused"} 5' \
  'provider="postmark",outcome="suppressed"} 1' 'provider="postmark",outcome="refused"} 1' \
  'provider="standard-webhooks",outcome="suppressed"} 1' 'provider="standard-webhooks",outcome="refused"} 1'; do
  echo "$metrics" | grep -qF "postern_delivery_events_total{$line" || fail "metrics lack $line: $(echo "$metrics" | grep delivery_events)"
done
grep -Eq "ses-bounced|ses-complained|pm-bounced|resend-bounced|eve@" "$work/serve/log" && fail "an address reached the log"
grep -q "the-postmark-test-password\|$resend_secret" "$work/serve/log" && fail "a secret reached the log"
echo "ok 5: /metrics counts every provider's outcomes; the log holds no address and no secret"
echo "delivery events: all passed"
