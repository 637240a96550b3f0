#!/usr/bin/env bash
# The command line and the daemon on PostgreSQL: --database with a connection string selects it;
# a password in it never reaches an error or a log line; the master key file defaults to
# ./postern.key (or --master-key-file); 3 processes starting at once on a fresh database migrate
# it once; a database migrated by a newer postern is refused with exit 69. Uses the server
# POSTERN_TEST_POSTGRES names (scripts/test starts one), else starts and stops its own.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
postern=${POSTERN_BIN:-$root/.build/debug/postern}
source "$root/Tests/integration/postgres_lib.bash"
work=$(mktemp -d)
pid=
cleanup() {
  [ -z "$pid" ] || kill "$pid" 2>/dev/null || true
  postgres_stop
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
export POSTERN_TEMPLATES="$root/templates"
fail() { echo "FAIL: $*" >&2; exit 1; }
expect_exit() { # CODE command...
  local want=$1; shift
  set +e; "$@" >out.txt 2>err.txt; local got=$?; set -e
  [ "$got" -eq "$want" ] || { cat out.txt err.txt >&2; fail "$* exited $got, want $want"; }
}
postgres_server
secret="pw-S3cret-$RANDOM$RANDOM"

# A server that is not there: exit 69, the server named, the password nowhere.
for bad in "postgres://postern:$secret@127.0.0.1:1/postern?connect_timeout=2" \
           "host=127.0.0.1 port=1 user=postern password=$secret dbname=postern connect_timeout=2"; do
  expect_exit 69 "$postern" keys list --database "$bad"
  grep -q "PostgreSQL" err.txt || fail "the error does not say PostgreSQL: $(cat err.txt)"
  ! grep -q -- "$secret" out.txt err.txt || fail "the password is in the error: $(cat err.txt)"
done
[ ! -e postern.key ] || fail "a failed start made a key file"

# The real server (trust authentication ignores the password; it is there to be kept out of logs).
db=$(postgres_database cli)
with_password="$db password=$secret"
expect_exit 0 "$postern" keys list --database "$with_password" --json
[ "$(stat -c %a postern.key)" = 600 ] || fail "./postern.key is not 0600"
[ ! -e postern.db ] || fail "a SQLite file was made"
expect_exit 0 "$postern" send-link --action sign-in --email ann@example.com --print --database "$with_password"
link=$(head -1 out.txt)
"$postern" handle-link "$link" --database "$with_password" >out.txt 2>err.txt || fail "handle-link: $(cat err.txt)"
expect_exit 0 "$postern" users show --email ann@example.com --json --database "$with_password"
python3 -c 'import json; d=json.load(open("out.txt")); assert d["emailVerified"], d'
# Another key file cannot open the keys this one sealed: the file is what every daemon shares.
expect_exit 69 "$postern" keys list --database "$db" --master-key-file "$work/other.key"
expect_exit 0 "$postern" keys list --database "$db" --master-key-file "$work/postern.key"

# Housekeeping for cron: one round on PostgreSQL, expired rows gone, live ones kept.
psql "$db" -qAt -v ON_ERROR_STOP=1 -c "INSERT INTO consumed_codes VALUES ('\\x01', 1000), ('\\x02', 4000000000)" >/dev/null
expect_exit 0 "$postern" maintenance run --json --database "$with_password"
python3 -c 'import json; d=json.load(open("out.txt")); assert d["removed"]["consumed_codes"]==1 and not d["skipped"], d'
[ "$(psql "$db" -qAt -c 'SELECT count(*) FROM consumed_codes WHERE expires_at = 4000000000')" = 1 ] || fail "maintenance run removed a live ledger entry"
! grep -q -- "$secret" out.txt err.txt || fail "the password is in maintenance's output"

# The daemon: its listening line names the server, not the password.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$postern" serve --database "$with_password" --listen "127.0.0.1:$port" --metrics-listen off 2>serve.log &
pid=$!
for _ in $(seq 300); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
[ "$(curl -sf "http://127.0.0.1:$port/readyz")" = '{"status":"ready"}' ] || fail "not ready: $(cat serve.log)"
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
  -d '{"email":"bo@example.com"}' "http://127.0.0.1:$port/v1/email-link/send")
[ "$code" = 202 ] || fail "send-link over HTTP answered $code: $(tail -5 serve.log)"
kill -TERM "$pid"; wait "$pid" || true; pid=
grep -q '"listening"\|listening' serve.log || fail "no listening line: $(cat serve.log)"
grep 'listening' serve.log | grep -q "PostgreSQL host=" || fail "the listening line does not name the server: $(grep listening serve.log)"
! grep -q -- "$secret" serve.log || fail "the password is in the daemon's log"

# 3 processes starting at once on a fresh database: each succeeds, the schema is migrated once.
db=$(postgres_database cli)
pids=()
for n in 1 2 3; do "$postern" keys list --database "$db" >"start$n.txt" 2>&1 & pids+=($!); done
for p in "${pids[@]}"; do wait "$p" || fail "a concurrent start failed: $(cat start*.txt)"; done
# One row per migration, each version once (the version is the key: a second migrator's insert
# would have failed its start above).
[ "$(psql "$db" -qAt -c 'SELECT count(*) = max(version) AND count(*) > 0 FROM postern_migrations')" = t ] \
  || fail "migrated more than once: $(psql "$db" -qAt -c 'SELECT version, applied_at FROM postern_migrations')"
# One active key per purpose (action codes, ID tokens, the phone-number hash key), whatever
# number of purposes there is.
[ "$(psql "$db" -qAt -c "SELECT count(*) = count(DISTINCT purpose) AND count(*) >= 2 FROM keys WHERE status = 'active'")" = t ] \
  || fail "concurrent starts made more than one active key per purpose: $(psql "$db" -qAt -c "SELECT purpose, id FROM keys WHERE status = 'active'")"

# A schema newer than this postern knows: refused, exit 69, saying so.
psql "$db" -qAt -c "INSERT INTO postern_migrations VALUES (999, 0)" >/dev/null
expect_exit 69 "$postern" keys list --database "$db"
grep -q "newer" err.txt || fail "the refusal does not say the schema is newer: $(cat err.txt)"
echo "postgres-cli: ok"
