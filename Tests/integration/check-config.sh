#!/usr/bin/env bash
# postern check-config against aiosmtpd with STARTTLS and AUTH: the right password passes (exit 0)
# and the server sees TLS, the login and QUIT, and no mail; a wrong password, an untrusted
# certificate and a relay without STARTTLS each exit 78 naming the step, never the password.
# Several problems at once are listed together.
set -euo pipefail
source "$(dirname "$0")/outbox_lib.bash"
postern=${POSTERN_BIN:-$root/.build/debug/postern}
cd "$work"
export POSTERN_TEMPLATES="$root/templates" POSTERN_DATABASE="$work/postern.db"

check() { # WANT ARGS... : runs check-config, its output in $work/check.out
  local want=$1; shift
  set +e; "$postern" check-config "$@" >"$work/check.out" 2>&1; local got=$?; set -e
  [ "$got" -eq "$want" ] || { cat "$work/check.out"; fail "check-config $* exited $got, want $want"; }
  ! grep -q "pa55" "$work/check.out" || fail "the password reached the output"
}

port=$(free_port)
start_server tls --port "$port" --tls-dir "$work/tls" --auth "postern:pa55:word"
printf 'pa55:word\n' >"$work/password"
relay=(--smtp-url "smtp://postern@127.0.0.1:$port" --smtp-ca-file "$work/tls/ca.pem")

check 0 "${relay[@]}" --smtp-password-file "$work/password"
grep -q "^ok: the SMTP relay" "$work/check.out" || fail "no relay line: $(cat "$work/check.out")"
grep -q "auth PLAIN ok\|auth LOGIN ok" "$work/tls/server.log" || fail "the relay saw no login: $(cat "$work/tls/server.log")"
grep -q "quit tls=True auth=True mail=False" "$work/tls/server.log" || fail "no QUIT after TLS and the login: $(cat "$work/tls/server.log")"
! grep -q "^accepted" "$work/tls/server.log" || fail "check-config sent mail"
[ -z "$(ls "$work/tls/out")" ] || fail "the relay holds a message"
[ ! -e "$work/postern.db" ] && [ ! -e "$work/postern.key" ] || fail "check-config made the database or the key"

printf 'wrong\n' >"$work/wrong"
check 78 "${relay[@]}" --smtp-password-file "$work/wrong"
grep -q "problem: --smtp-url .*AUTH was refused: 535" "$work/check.out" || fail "wrong password: $(cat "$work/check.out")"

check 78 --smtp-url "smtp://postern@127.0.0.1:$port" --smtp-password-file "$work/password"
grep -qi "problem: --smtp-url .*certificate" "$work/check.out" || fail "untrusted certificate: $(cat "$work/check.out")"

plain=$(free_port)
start_server plain --port "$plain"
check 78 --smtp-url "smtp://127.0.0.1:$plain"
grep -qi "problem: --smtp-url .*STARTTLS\|problem: --smtp-url .*SSL" "$work/check.out" || fail "no STARTTLS: $(cat "$work/check.out")"

# Every problem at once: two bad settings, then (settings fine) a missing template directory and
# a wrong password together.
check 78 --ttl-sign-in 5 --workers 300 "${relay[@]}"
[ "$(grep -c '^problem:' "$work/check.out")" -eq 2 ] || fail "two setting problems: $(cat "$work/check.out")"
check 78 "${relay[@]}" --smtp-password-file "$work/wrong" --templates "$work/none"
[ "$(grep -c '^problem:' "$work/check.out")" -eq 2 ] || fail "templates and the relay: $(cat "$work/check.out")"
grep -q "78 check-config\|2 problems to fix" "$work/check.out" || fail "no summary line"
echo "check-config: ok"
