#!/usr/bin/env bash
# The end-to-end test (e2e_test.py, as e2e.sh runs it) against a daemon on PostgreSQL: a fresh
# database on the server POSTERN_TEST_POSTGRES names (scripts/test starts one), or on a throwaway
# server this script starts with scripts/postgres and stops at exit. The master key file is the
# PostgreSQL default, ./postern.key in the test's work directory.
set -euo pipefail
source "$(dirname "$0")/pytest_lib.bash"
source "$(dirname "$0")/postgres_lib.bash"
require_chromium
postgres_for_pytest e2e E2E_DATABASE
run_pytest "$root/Tests/integration/e2e_test.py"
