#!/usr/bin/env bash
# Sign-in by phone (issue 17 point 4, --phone-sign-in) against a real `postern serve` (see
# phone_signin_test.py): sign-up, sign-in again, anonymous upgrade, MIGRATION_REQUIRED then
# allowMigration, link and CREDENTIAL_ALREADY_IN_USE, disabled user, 5 wrong codes, replayed,
# superseded and expired codes, 20 concurrent completes on SQLite and PostgreSQL, the same bytes
# for a held and a free number, the per-number cap's 429, the webhooks. PostgreSQL is the server
# POSTERN_TEST_POSTGRES names (scripts/test starts one), or a throwaway one started here.
set -euo pipefail
source "$(dirname "$0")/pytest_lib.bash"
source "$(dirname "$0")/postgres_lib.bash"
postgres_for_pytest phone_signin PHONES_PG_DATABASE
run_pytest "$root/Tests/integration/phone_signin_test.py"
