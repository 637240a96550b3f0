#!/usr/bin/env bash
# The outbox over SMTP with STARTTLS and AUTH against aiosmtpd, with a certificate made here and
# trusted through --smtp-ca-file: every message arrives once, and Python's email parser reads back
# its headers and both parts. Without the CA, with a wrong password, or with a password given
# twice, nothing is sent. smtps:// (TLS from the first byte) delivers too; smtp:// to a server
# without STARTTLS sends nothing.
set -euo pipefail
source "$(dirname "$0")/outbox_lib.bash"

port=$(free_port)
start_server tls --port "$port" --tls-dir "$work/tls" --auth "postern:pa55:word"
db="$work/tls.db"
printf 'pa55:word\n' >"$work/password"
"$bench" outbox-queue --database "$db" --count 20 >/dev/null
"$bench" outbox-run --database "$db" --smtp-url "smtp://postern@127.0.0.1:$port" --smtp-password-file "$work/password" \
  --smtp-ca-file "$work/tls/ca.pem" --workers 4 --timeout 60 >"$work/run.out" 2>"$work/run.err" || { cat "$work/run.out" "$work/run.err"; fail "run"; }
grep -q "sent=20 dead=0" "$work/run.out" || fail "not all sent: $(cat "$work/run.out")"
grep -q "tls=True auth=True" "$work/tls/server.log" || fail "not over TLS with AUTH"
! grep -q "tls=False" "$work/tls/server.log" || fail "a message went without TLS"
[ "$(ls "$work/tls/out" | wc -l)" -eq 20 ] || fail "server holds $(ls "$work/tls/out" | wc -l) messages, want 20"
[ "$(sql "$db" "SELECT count(*) FROM outbox WHERE state='sent' AND body IS NULL AND last_reply LIKE '250 2.0.0 accepted%'")" = 20 ] || fail "rows not sent with the reply and an erased body"
! grep -q "pa55" "$work/run.err" || fail "the password reached a log line"
[ "$(sql "$db" "SELECT count(*) FROM outbox WHERE last_reply LIKE '%pa55%'")" = 0 ] || fail "the password reached the database"

"$python" - "$work/tls/out" <<'PY'
import email, email.policy, os, re, sys
directory = sys.argv[1]
for name in sorted(os.listdir(directory)):
    rcpt = name.split("-", 1)[1][:-4]
    with open(os.path.join(directory, name), "rb") as f:
        raw = f.read()
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    assert msg["To"].addresses[0].addr_spec == rcpt, (msg["To"], rcpt)
    assert msg["From"].addresses[0].addr_spec == "no-reply@example.com", msg["From"]
    assert msg["Subject"] and msg["Date"] and re.fullmatch(r"<[A-Za-z0-9_-]+@example\.com>", msg["Message-ID"]), dict(msg)
    assert msg["Auto-Submitted"] == "auto-generated" and msg.get_content_type() == "multipart/alternative"
    text = msg.get_body(("plain",)).get_content()
    html = msg.get_body(("html",)).get_content()
    links = set(re.findall(r"https://auth\.example\.com/action\?mode=signIn&oobCode=bench-\d+", text))
    assert len(links) == 1, text
    assert next(iter(links)).replace("&", "&amp;") in html or next(iter(links)) in html, html
    assert b"\r\n" in raw and not re.search(rb"[^\r]\n", raw), "bare LF"
print("parsed", len(os.listdir(directory)), "messages")
PY

# Without the CA the certificate check fails: nothing is sent, the message waits for a retry.
db2="$work/noca.db"
"$bench" outbox-queue --database "$db2" --count 1 >/dev/null
"$bench" outbox-run --database "$db2" --smtp-url "smtp://postern:pa55%3Aword@127.0.0.1:$port" --timeout 2 >"$work/noca.out" 2>/dev/null && fail "sent without trusting the CA"
[ "$(sql "$db2" "SELECT state FROM outbox")" = retrying ] || fail "untrusted certificate: $(sql "$db2" "SELECT state, last_reply FROM outbox")"
sql "$db2" "SELECT last_reply FROM outbox" | grep -qi "certificate" || fail "the reply does not name the certificate"

# A wrong password: AUTH is refused (535), nothing is sent, nobody is suppressed.
db3="$work/wrongpw.db"
"$bench" outbox-queue --database "$db3" --count 1 >/dev/null
"$bench" outbox-run --database "$db3" --smtp-url "smtp://postern:nope@127.0.0.1:$port" --smtp-ca-file "$work/tls/ca.pem" --timeout 2 >/dev/null 2>&1 && fail "sent with a wrong password"
[ "$(sql "$db3" "SELECT state || ' ' || last_reply FROM outbox")" = "retrying 535 5.7.8 Authentication credentials invalid" ] || fail "wrong password: $(sql "$db3" "SELECT state, last_reply FROM outbox")"
[ "$(sql "$db3" "SELECT count(*) FROM suppressions")" = 0 ] || fail "an AUTH failure suppressed the recipient"

# The password in the URL and in a file is a configuration error.
set +e
"$bench" outbox-run --database "$db3" --smtp-url "smtp://postern:secret@127.0.0.1:$port" --smtp-password-file "$work/password" >/dev/null 2>"$work/both.err"
code=$?
set -e
[ "$code" -ne 0 ] && grep -q "both" "$work/both.err" && ! grep -q secret "$work/both.err" || fail "password twice: $code $(cat "$work/both.err")"
[ "$(ls "$work/tls/out" | wc -l)" -eq 20 ] || fail "a refused run still delivered"

# smtps:// — TLS from the first byte, same CA.
port2=$(free_port)
start_server smtps --port "$port2" --tls-dir "$work/tls" --implicit-tls --auth "postern:pa55:word"
db4="$work/smtps.db"
"$bench" outbox-queue --database "$db4" --count 3 >/dev/null
"$bench" outbox-run --database "$db4" --smtp-url "smtps://postern:pa55%3Aword@127.0.0.1:$port2" --smtp-ca-file "$work/tls/ca.pem" \
  --timeout 30 >"$work/smtps.out" 2>/dev/null || fail "smtps: $(cat "$work/smtps.out")"
grep -q "sent=3 dead=0" "$work/smtps.out" && [ "$(ls "$work/smtps/out" | wc -l)" -eq 3 ] || fail "smtps: $(cat "$work/smtps.out")"

# smtp:// requires STARTTLS: a server that does not offer it gets nothing, not a plain-text send.
port3=$(free_port)
start_server plain --port "$port3"
db5="$work/nostarttls.db"
"$bench" outbox-queue --database "$db5" --count 1 >/dev/null
"$bench" outbox-run --database "$db5" --smtp-url "smtp://127.0.0.1:$port3" --timeout 2 >/dev/null 2>&1 && fail "sent without STARTTLS"
[ "$(ls "$work/plain/out" 2>/dev/null | wc -l)" -eq 0 ] || fail "mail went in plain text to a server without STARTTLS"
[ "$(sql "$db5" "SELECT state FROM outbox")" = retrying ] || fail "no STARTTLS: $(sql "$db5" "SELECT state, last_reply FROM outbox")"
echo "outbox smtp tls: ok"
