#!/usr/bin/env bash
# Sign-in by phone (issue 17 point 4, --phone-sign-in) against a real `postern serve` (see
# phone_signin_test.py): sign-up, sign-in again, anonymous upgrade, MIGRATION_REQUIRED then
# allowMigration, link and CREDENTIAL_ALREADY_IN_USE, disabled user, 5 wrong codes, replayed,
# superseded and expired codes, 20 concurrent completes on SQLite and PostgreSQL, the same bytes
# for a held and a free number, the per-number cap's 429, the webhooks. PostgreSQL is the server
# POSTERN_TEST_POSTGRES names (scripts/test starts one), or a throwaway one started here.
set -euo pipefail
source "$(dirname "$0")/pytest_lib.bash"
server_dir=
cleanup() {
  pytest_cleanup
  [ -z "$server_dir" ] || "$root/scripts/postgres" stop "$server_dir"
}
trap cleanup EXIT
conn="${POSTERN_TEST_POSTGRES:-}"
if [ -z "$conn" ]; then
  started=$("$root/scripts/postgres" start)
  server_dir=$(sed -n 1p <<<"$started")
  conn=$(sed -n 2p <<<"$started")
fi
name="phone_signin_$(date +%s)_$$"
psql "$conn" -qAt -v ON_ERROR_STOP=1 -c "CREATE DATABASE $name" >/dev/null
export PHONES_PG_DATABASE="$conn dbname=$name"
run_pytest "$root/Tests/integration/phone_signin_test.py"
